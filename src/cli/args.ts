import { parseArgs } from "node:util";
import { ConfigError } from "../config/config-error.ts";
import { SETTINGS, type SettingName } from "../config/settings.ts";

/** A command's flags: the settings it reads (with their env variables) and its own. */
export interface FlagSpec {
  readonly settings?: readonly SettingName[];
  readonly strings?: readonly string[];
  readonly booleans?: readonly string[];
  /** Positional arguments: [least, most]. */
  readonly positionals?: readonly [number, number];
  /** The positional arguments' names, as the command's usage names them (ID, PLAN): a missing one is named. */
  readonly arguments?: readonly string[];
}

export interface ParsedArgs {
  readonly flags: Readonly<Record<string, string | boolean | undefined>>;
  readonly positionals: readonly string[];
}

/** Parses a command's arguments strictly: an unknown flag or a missing value is a ConfigError. */
export function parseCommandArgs(argv: readonly string[], spec: FlagSpec): ParsedArgs {
  const options: Record<string, { type: "string" | "boolean" }> = { help: { type: "boolean" } };
  for (const name of spec.settings ?? []) options[SETTINGS[name].flag] = { type: "string" };
  for (const name of spec.strings ?? []) options[name] = { type: "string" };
  for (const name of spec.booleans ?? []) options[name] = { type: "boolean" };
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new ConfigError((error as Error).message.replace(/\. To specify a positional argument.*$/s, ""));
  }
  const [least, most] = spec.positionals ?? [0, 0];
  if (!parsed.values.help) {
    if (parsed.positionals.length < least) {
      const missing = spec.arguments?.slice(parsed.positionals.length, least) ?? [];
      throw new ConfigError(missing.length === 0 ? "missing argument" : `missing argument${missing.length > 1 ? "s" : ""} ${missing.join(" ")}`);
    }
    if (parsed.positionals.length > most) throw new ConfigError(`unexpected argument "${parsed.positionals[most]}"`);
  }
  return { flags: parsed.values, positionals: parsed.positionals };
}

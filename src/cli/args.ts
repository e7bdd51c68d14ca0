import { parseArgs } from "node:util";
import { ConfigError } from "../config/config-error.ts";
import { SETTINGS, type SettingName } from "../config/settings.ts";
import { nearestName } from "./nearest.ts";

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
    throw flagError((error as Error).message, argv, Object.keys(options));
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

/** A flag the command does not take: the command line adds where its flags are listed (its --help). */
export class UnknownFlagError extends ConfigError {}

/**
 * node:util's parseArgs errors in one line of iplookup's: a value that starts with a
 * dash (`--port -1`, read as a flag: node's three lines), a flag without its value, and
 * a flag the command does not take, with the one it most likely misspells. A flag the
 * command takes where a value was due (`--state --json`) is a missing value.
 */
function flagError(message: string, argv: readonly string[], flags: readonly string[]): ConfigError {
  const ambiguous = /^Option '(--?[^' ]+)[^']*' argument is ambiguous/.exec(message);
  if (ambiguous) {
    const flag = ambiguous[1] as string;
    const at = argv.findIndex((arg, index) => arg === flag && argv[index + 1]?.startsWith("-"));
    const value = argv[at + 1];
    if (at >= 0 && value !== undefined) {
      // A flag the command takes (--state --json): the value was forgotten, not mistyped.
      if (value.startsWith("--") && flags.includes(value.slice(2).split("=")[0] as string)) {
        return new ConfigError(`${flag} needs a value (to give "${value}" as its value, write ${flag}=${value})`);
      }
      return new ConfigError(`${flag}: "${value}" starts with a dash, so it reads as a flag; give it as ${flag}=${value}`);
    }
  }
  const missing = /^Option '(--?[^' ]+)[^']*' argument missing/.exec(message);
  if (missing) return new ConfigError(`${missing[1]} needs a value`);
  const needless = /^Option '(--?[^' ]+)' does not take an argument/.exec(message);
  if (needless) return new ConfigError(`${needless[1]} takes no value`);
  const unknown = /^Unknown option '([^']+)'/.exec(message);
  if (unknown) {
    // A word of one dash is read as single-letter flags (-1.1.1.1: -1, -., ...), of which
    // node names the first it does not know without its dash: the word is shown as typed.
    const reported = unknown[1] as string;
    const end = argv.indexOf("--");
    const typed = reported.startsWith("-") ? reported : (argv.slice(0, end < 0 ? argv.length : end).find((arg) => /^-[^-]/.test(arg) && arg.slice(1).includes(reported)) ?? `-${reported}`);
    const near = typed.startsWith("--") ? nearestName(typed.slice(2).split("=")[0] as string, flags) : null;
    return new UnknownFlagError(`unknown flag ${typed}${near ? ` (did you mean --${near}?)` : ""}`);
  }
  return new ConfigError(message.replace(/\. To specify a positional argument.*$/s, "").replaceAll("\n", " "));
}

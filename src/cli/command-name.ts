import { isAbsolute, relative } from "node:path";
import { isEmbedded } from "../config/paths.ts";
import type { CliContext } from "./command.ts";

/**
 * How the user starts iplookup, for hints that name a command: `iplookup` for the
 * compiled binary, `bun src/main.ts` from a checkout (CONTRACT §6: the same commands
 * either way, so a hint must be one the user can paste).
 *
 * From a checkout, the script is named relative to the working directory when it lies
 * below it (`bun src/main.ts` at the checkout's top), else by its absolute path, so the
 * hint works wherever the user stands. Running source is told from the binary by the
 * script's path: a compiled binary's modules live under Bun's virtual root.
 */
export function commandName(context: Pick<CliContext, "selfCommand">): string {
  const script = context.selfCommand[1];
  if (script === undefined || isEmbedded(script) || isEmbedded(import.meta.path)) return "iplookup";
  const below = relative(process.cwd(), script);
  return `bun ${shellWord(below !== "" && !below.startsWith("..") && !isAbsolute(below) ? below : script)}`;
}

/** A path (or any value) as one shell word: quoted when it holds anything a shell would split or expand. */
export function shellWord(text: string): string {
  return /^[\w./@+,:=-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}

/** A whole command line to suggest: `howToRun(context, "keys create --name NAME")`. */
export function howToRun(context: Pick<CliContext, "selfCommand">, args: string): string {
  return `${commandName(context)} ${args}`;
}

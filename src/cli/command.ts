import type { Io } from "./io.ts";

/** What every command runs with; nothing is read from globals. */
export interface CliContext {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly io: Io;
  readonly now: () => Date;
  /** The data file used when neither --data nor IPLOOKUP_DATA names one. */
  readonly defaultDataPath: string;
  /** The command that starts this program again (hints name it as the user runs it). */
  readonly selfCommand: readonly string[];
  /** The module worker threads start from, where it is not beside the server's own (the compiled binary). */
  readonly workerEntry?: string;
}

/** A command or a group's sub-command: `run` resolves to the exit code. */
export interface Command {
  readonly name: string;
  readonly summary: string;
  /** The full `--help` text. */
  readonly help: string;
  run(argv: readonly string[], context: CliContext): Promise<number>;
}

/**
 * A command's refusal (no such key, a key revoked already, …): the command line prints
 * the message as it is and exits 1. The command has changed nothing.
 */
export class CommandFailed extends Error {
  override readonly name = "CommandFailed";
}

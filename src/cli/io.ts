import { logWrites } from "./log-writes.ts";

/** Where a command writes; tests pass their own to read what a command printed. */
export interface Io {
  out(text: string): void;
  err(text: string): void;
  /**
   * Writes to standard error and calls `written` once the reader has taken the text;
   * for a server's logs, which must not pile up behind a stalled reader. Without it, the
   * text counts as taken when `err` returns.
   */
  errWhenTaken?(text: string, written: () => void): void;
  /** Standard error as a stream, for progress redrawn in place on a terminal. */
  readonly terminal?: { write(text: string): unknown; readonly isTTY?: boolean };
}

/** This process's log writes to standard error (see log-writes.ts). */
export const stderrLog = logWrites((text, taken) => process.stderr.write(`${text}\n`, () => taken()));

export const processIo: Io = {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
  errWhenTaken: stderrLog.write,
  terminal: process.stderr,
};

/** Exit codes: 0 done, 1 the command failed, 2 the command line was wrong (CONTRACT §6). */
export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

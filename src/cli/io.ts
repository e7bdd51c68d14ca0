import { logWrites } from "./log-writes.ts";

/** Where a command writes; tests pass their own to read what a command printed. */
export interface Io {
  out(text: string): void;
  err(text: string): void;
  /**
   * Writes to standard error and calls `written` once the reader has taken the text, or
   * with true once it cannot be written (the server counts its lines dropped); for a
   * server's logs, which must not pile up behind a stalled reader. Without it, the text
   * counts as taken when `err` returns.
   */
  errWhenTaken?(text: string, written: (failed?: boolean) => void): void;
  /** Standard error as a stream, for progress redrawn in place on a terminal. */
  readonly terminal?: { write(text: string): unknown; readonly isTTY?: boolean };
}

/**
 * Whether a write error says the output is gone for good: its reader closed the pipe
 * (EPIPE) or the descriptor is no longer open (EBADF).
 */
export function isOutputGone(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return code === "EPIPE" || code === "EBADF";
}

/** Set once standard error is gone (see isOutputGone): later log writes fail at once, unwritten. */
let stderrGone = false;

/**
 * This process's log writes to standard error (see log-writes.ts). A write that fails
 * is told as failed; once stderr is gone, none is tried again (no reader comes back to a
 * closed pipe). The error the stream then emits is handled in entry.ts.
 */
export const stderrLog = logWrites((text, taken) => {
  if (stderrGone) return taken(true);
  process.stderr.write(`${text}\n`, (error) => {
    if (error && isOutputGone(error)) stderrGone = true;
    taken(Boolean(error));
  });
});

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

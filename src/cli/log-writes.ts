/**
 * A server's log writes to standard error, and what becomes of them when the process
 * ends. A write the reader has not taken keeps the process alive until it is taken; a
 * stalled reader (a stuck journal, a stopped pipe) would keep a stopped server alive
 * for good. Log lines that cannot be written are dropped (CONTRACT §12): so the process
 * waits for its log writes only while the reader keeps taking them, and within a bound.
 * A write that fails (the reader is gone: EPIPE; stderr was closed: EBADF) is settled
 * too, and told to its writer as failed.
 */
export interface LogWrites {
  /** Writes `text` and calls `written` once the reader has taken it, or with true once it cannot be written. */
  write(text: string, written: (failed?: boolean) => void): void;
  /**
   * Resolves true once every write has been taken; false, leaving the rest, once the
   * reader has taken none for `idleMs` or `maxMs` have passed.
   */
  settled(idleMs: number, maxMs: number): Promise<boolean>;
}

export function logWrites(output: (text: string, taken: (failed?: boolean) => void) => void, monotonicMs: () => number = () => performance.now()): LogWrites {
  let pending = 0;
  let lastTaken = 0;
  let onTaken = () => {};
  return {
    write(text, written) {
      pending++;
      output(text, (failed) => {
        pending--;
        lastTaken = monotonicMs();
        written(failed);
        onTaken();
      });
    },
    settled(idleMs, maxMs) {
      if (pending === 0) return Promise.resolve(true);
      const started = monotonicMs();
      lastTaken = started;
      return new Promise((resolve) => {
        const check = () => {
          const now = monotonicMs();
          if (pending > 0 && now - lastTaken < idleMs && now - started < maxMs) return;
          clearInterval(timer);
          onTaken = () => {};
          resolve(pending === 0);
        };
        const timer = setInterval(check, Math.max(1, Math.min(idleMs, maxMs) / 10));
        onTaken = check;
      });
    },
  };
}

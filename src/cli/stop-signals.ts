import { readFileSync } from "node:fs";
import { constants } from "node:os";

/** The signals that stop a command: a kill, a Ctrl-C, the terminal closing. */
const STOP_SIGNALS = ["SIGTERM", "SIGINT", "SIGHUP"] as const;

/**
 * Runs `work`; if SIGTERM, SIGINT or SIGHUP arrives meanwhile, calls `cleanUp` and ends
 * the process at once with 128 + the signal's number, the code a shell reports for a
 * command the signal ended. Unhandled, the signal would end the process with the files
 * `work` leaves while it runs (backup's partial copy) still there. Before and after
 * `work`, the signals do what they did; a signal the process was started ignoring
 * (SIGHUP under nohup, SIGINT in a script's background job) stays ignored.
 *
 * A handler runs between turns of the event loop: what `work` does synchronously is
 * never cut short, so `work` keeps the long waits (a copy on another thread) awaited, and
 * gives the loop a turn (signalsHandled) after a long synchronous stretch and before a
 * step that cannot be taken back. A signal that came during `work`'s last stretch is
 * handled once `work` has ended, before the handlers go: it is never dropped.
 *
 * `work` calls `committed` just before that step (a rename into place): from then on the
 * command's result stands, so a signal no longer ends it, and the command finishes (its
 * clean-up, its output, its announcement) and exits as it would have. Exiting 128 + N
 * then would tell of a command stopped with nothing done, while its file is in place.
 */
export async function cleaningUpOnStop<T>(cleanUp: () => void, work: (committed: () => void) => Promise<T>): Promise<T> {
  const ignored = ignoredSignals();
  let resultStands = false;
  const handlers = STOP_SIGNALS.filter((signal) => !ignored.has(constants.signals[signal])).map((signal) => {
    const handler = () => {
      if (resultStands) return;
      cleanUp();
      process.exit(128 + constants.signals[signal]);
    };
    process.on(signal, handler);
    return [signal, handler] as const;
  });
  try {
    return await work(() => (resultStands = true));
  } finally {
    await signalsHandled();
    for (const [signal, handler] of handlers) process.off(signal, handler);
  }
}

/**
 * One turn of the event loop, in which a signal that arrived while the process was busy
 * runs its handler (a resolved promise is not enough: it settles before the loop turns).
 */
export function signalsHandled(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** The numbers of the signals this process ignores (Linux's /proc); none where that cannot be read. */
function ignoredSignals(): Set<number> {
  let mask: bigint;
  try {
    const line = /^SigIgn:\s*([0-9a-f]+)$/m.exec(readFileSync("/proc/self/status", "utf8"));
    if (!line) return new Set();
    mask = BigInt(`0x${line[1]}`);
  } catch {
    return new Set();
  }
  const ignored = new Set<number>();
  for (let signal = 1; signal <= 64; signal++) if ((mask >> BigInt(signal - 1)) & 1n) ignored.add(signal);
  return ignored;
}

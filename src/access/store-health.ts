/**
 * Whether a server's state store can be reached right now, as its threads' own calls
 * find it: each thread's key cache poll (every 250 ms) says reachable or not, and a lease
 * of rate-limit tokens that fails with StoreUnavailableError says not. (A charge that
 * times out does not: on SQLite that is a state file locked by a backup, which leaves the
 * server ready, CONTRACT §12.) /readyz answers 503 while it is not, and on a store that
 * several servers share (PostgreSQL) /v1 requests answer 503 store_unavailable at once
 * rather than queue for a database that is away (see LeaseLimiter).
 *
 * The verdict is the server's, not a thread's: the threads share one mark each (`marks`,
 * an Int32Array over a SharedArrayBuffer, see sharedStoreMarks), and the store counts as
 * reachable only while no thread has found it not. So every thread answers alike from
 * the moment the first one notices an outage: a load balancer probing /readyz, whichever
 * thread takes its connection, never sees a server that is half ready, and no request
 * waits out a timeout on a thread whose own poll has not come round yet.
 *
 * Nothing clears a thread's mark but its own successful poll, so recovery needs no
 * request to try its luck: the polls find the database back within a quarter second.
 */
export class StoreHealth {
  /**
   * @param onChange called when this thread's own mark changes, with the error that set it.
   * @param marks one mark per thread of the server (1: that thread cannot reach the store).
   * @param thread this thread's mark in `marks`.
   */
  constructor(
    private readonly onChange: (reachable: boolean, error?: unknown) => void = () => {},
    private readonly marks: Int32Array = sharedStoreMarks(1),
    private readonly thread = 0,
  ) {
    if (!(thread >= 0 && thread < marks.length)) throw new RangeError(`no mark for thread ${thread} among ${marks.length}`);
  }

  /** Whether no thread of the server has found the store unreachable. */
  get reachable(): boolean {
    const marks = this.marks;
    for (let t = 0; t < marks.length; t++) if (Atomics.load(marks, t) !== 0) return false;
    return true;
  }

  markReachable(): void {
    if (Atomics.exchange(this.marks, this.thread, 0) === 0) return;
    this.onChange(true);
  }

  markUnreachable(error: unknown): void {
    if (Atomics.exchange(this.marks, this.thread, 1) === 1) return;
    this.onChange(false, error);
  }
}

/** The marks of a server's `threads` threads, all reachable: made once, given to each thread. */
export function sharedStoreMarks(threads: number): Int32Array {
  return new Int32Array(new SharedArrayBuffer(4 * threads));
}

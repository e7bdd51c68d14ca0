import { StoreRefusedError, StoreTimeoutError, StoreUnavailableError } from "../store/store.ts";

/**
 * Whether a server's state store can serve its requests right now, as its threads' own
 * calls find it. Unhealthy ("cannot be reached") once a thread's key poll (every 250 ms)
 * fails to read it, or a write of the request path (a charge, a lease of rate-limit
 * tokens) is refused as unavailable: a database away, or one that takes no writes (a
 * standby after a failover, default_transaction_read_only), which reads alone would
 * never show. Healthy again only once a write succeeds: a charge or a lease, or the
 * probe write (Store.probeWrite) a thread's poll makes while its mark is set. A
 * successful read does not clear a mark, so a store that reads but does not write stays
 * unhealthy, with one log line when it goes and one when it is back, not a line each
 * poll.
 *
 * A write that ran out of its time (StoreTimeoutError: a lock another session holds, a
 * slow statement) says nothing about the store, and leaves health alone: it answers its
 * own requests 503; a rate-limit bucket locked turns away the keys that lease from it,
 * not the server. (On SQLite, a charge that times out is a state file locked by a
 * backup, which leaves the server ready, CONTRACT §12; its charges do not report here at
 * all: a state file that cannot be written has its own log lines, see sqlite-faults.ts.)
 *
 * /readyz answers 503 while the store is unhealthy, and on a store that several servers
 * share (PostgreSQL) /v1 requests answer 503 store_unavailable at once rather than queue
 * for a database that is away (see LeaseLimiter).
 *
 * The verdict is the server's, not a thread's: the threads share one mark each (`marks`,
 * an Int32Array over a SharedArrayBuffer, see sharedStoreMarks), and the store counts as
 * reachable only while no thread has found it not. So every thread answers alike from
 * the moment the first one notices an outage: a load balancer probing /readyz, whichever
 * thread takes its connection, never sees a server that is half ready, and no request
 * waits out a timeout on a thread whose own poll has not come round yet.
 *
 * Nothing clears a thread's mark but a write of its own that succeeds, so recovery needs
 * no request to try its luck: its poll's probe finds the database back within a quarter
 * second.
 */
export class StoreHealth {
  /** When this thread's mark was last set (performance.now()). */
  private markedAt = -Infinity;

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

  /** Whether this thread's own mark is set (its poll then probes with a write). */
  get markedHere(): boolean {
    return Atomics.load(this.marks, this.thread) !== 0;
  }

  /**
   * A write of this thread (a charge, a lease, a probe) that began at `startedAt`
   * (performance.now()) succeeded. Only a write begun after the mark was set clears it:
   * one that was on its way when the store went away says nothing about it now.
   */
  wrote(startedAt: number): void {
    if (Atomics.load(this.marks, this.thread) !== 0 && startedAt >= this.markedAt) this.markReachable();
  }

  /**
   * A write of this thread failed with `error`: the store is unhealthy if it refused the
   * write as unavailable, not if the write ran out of time nor if it refused this one
   * statement while it serves (StoreRefusedError: logged on its own, see error-response.ts).
   */
  writeFailed(error: unknown): void {
    if (error instanceof StoreUnavailableError && !(error instanceof StoreTimeoutError) && !(error instanceof StoreRefusedError)) this.markUnreachable(error);
  }

  markReachable(): void {
    if (Atomics.exchange(this.marks, this.thread, 0) === 0) return;
    this.onChange(true);
  }

  markUnreachable(error: unknown): void {
    if (Atomics.exchange(this.marks, this.thread, 1) === 1) return;
    this.markedAt = performance.now();
    this.onChange(false, error);
  }
}

/** The marks of a server's `threads` threads, all reachable: made once, given to each thread. */
export function sharedStoreMarks(threads: number): Int32Array {
  return new Int32Array(new SharedArrayBuffer(4 * threads));
}

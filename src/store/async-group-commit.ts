export interface AsyncGroupCommitOptions {
  /** Groups in flight at once (connections used for them). */
  readonly maxInFlight: number;
  /** The most items one group carries. */
  readonly maxGroupSize: number;
  /** The most items waiting for a slot; more are refused at once. */
  readonly maxQueued: number;
  /** How long an item may wait for its result, in milliseconds; 0 for no limit. */
  readonly timeoutMs: number;
  /** The error a timed-out or refused item rejects with. */
  readonly timeoutError: (reason: "timeout" | "queue-full") => Error;
  /**
   * A group still in flight after this many milliseconds (0: never) is given up: its
   * items reject with `timeoutError("timeout")`, its slot is freed for the next group,
   * and `onAbandon` runs (to replace connections that may hang for good: a partition
   * that dropped them silently).
   */
  readonly abandonAfterMs?: number;
  readonly onAbandon?: () => void;
}

/**
 * A result that fails its item alone: `commit` returns it in an item's place when the
 * group was committed in parts and the part that carried this item failed, while the
 * others, committed already, must still be answered as such.
 */
export class ItemFailure {
  constructor(readonly error: unknown) {}
}

interface Entry<Item, Result> {
  readonly item: Item;
  readonly resolve: (result: Result) => void;
  readonly reject: (error: unknown) => void;
  /** When its time is up (performance.now()); Infinity without a limit. */
  readonly deadline: number;
  timer?: ReturnType<typeof setTimeout>;
  settled: boolean;
}

/**
 * GroupCommit (group-commit.ts) for a database that answers asynchronously: items
 * submitted while earlier groups are in flight wait in one queue, and go together as the
 * next group, in one transaction, as soon as a slot is free. The busier the database, the
 * larger the groups: the number of transactions a second stays bounded by the round
 * trips, whatever the number of requests.
 *
 * `commit` runs a group in one transaction and resolves to one result per item, in order,
 * only once the transaction has committed; if it rejects, every item of the group
 * rejects with its error. An ItemFailure in an item's place rejects that item alone.
 * `commit` is given the group's deadline, its first item's (the earliest: the queue is
 * in order), and must end by then on its own: a transaction the database rolls back
 * when that time is up (a statement timeout), so that its rejection means "not applied".
 *
 * A bounded wait: an item still queued when its time is up is taken out of the queue and
 * rejects with `timeoutError()`, so it was certainly not applied. An item whose group is
 * already in flight is not recalled at its time, which could not stop its group from
 * committing later (a charge answered 503 and counted all the same): it waits for its
 * group's outcome, committed or rolled back, which `commit` makes known near the
 * deadline. A queue full to `maxQueued` refuses new items at once with the same error.
 * Only a group that hangs past `abandonAfterMs` (a database gone silent: the outcome
 * cannot be known) is given up, its items rejected while it may still commit later
 * (applied, but never reported as applied, never the other way round), so that one dead
 * connection cannot hold a slot or a request for good.
 */
export class AsyncGroupCommit<Item, Result> {
  private queue: Entry<Item, Result>[] = [];
  private inFlight = 0;
  /** Items submitted and not yet settled, queued or in a group in flight. */
  private unsettled = 0;
  private scheduled = false;
  private readonly idleWaiters: (() => void)[] = [];
  /** Groups committed, and the items they carried, since the start (for measurements). */
  readonly stats = { groups: 0, items: 0 };

  constructor(
    private readonly commit: (items: readonly Item[], deadline: number) => Promise<readonly (Result | ItemFailure)[]>,
    private readonly options: AsyncGroupCommitOptions,
  ) {}

  /** Queues an item; resolves with its result once its group has committed. */
  submit(item: Item): Promise<Result> {
    if (this.queue.length >= this.options.maxQueued) return Promise.reject(this.options.timeoutError("queue-full"));
    this.unsettled++;
    return new Promise((resolve, reject) => {
      const deadline = this.options.timeoutMs > 0 ? performance.now() + this.options.timeoutMs : Infinity;
      const entry: Entry<Item, Result> = { item, resolve, reject, deadline, settled: false };
      if (this.options.timeoutMs > 0) {
        entry.timer = setTimeout(() => this.expire(entry), this.options.timeoutMs);
      }
      this.queue.push(entry);
      this.schedule();
    });
  }

  /**
   * Starts groups for everything queued, and resolves once every item submitted has
   * settled: committed, failed, rejected at its time while queued, or given up with its
   * group (`abandonAfterMs`). A group given up is not waited for: nobody waits for its
   * outcome, and it may be cut short.
   */
  async drain(): Promise<void> {
    this.start();
    if (this.unsettled === 0) return;
    await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * On the next turn of the event loop (setImmediate, as GroupCommit does), so that the
   * requests read from the sockets in this turn join the same group.
   */
  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.options.maxInFlight) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.start();
    });
  }

  private start(): void {
    while (this.inFlight < this.options.maxInFlight && this.queue.length > 0) {
      const group = this.queue.splice(0, this.options.maxGroupSize);
      // In flight: no longer recalled at its time (see expire).
      for (const entry of group) clearTimeout(entry.timer);
      this.inFlight++;
      void this.run(group);
    }
  }

  private async run(group: Entry<Item, Result>[]): Promise<void> {
    let watchdog: ReturnType<typeof setTimeout> | undefined;
    const giveUp = new Promise<"abandoned">((resolve) => {
      if (this.options.abandonAfterMs) watchdog = setTimeout(() => resolve("abandoned"), this.options.abandonAfterMs);
    });
    let committing: Promise<readonly (Result | ItemFailure)[]>;
    try {
      committing = this.commit(
        group.map((entry) => entry.item),
        group[0]!.deadline,
      );
    } catch (error) {
      committing = Promise.reject(error);
    }
    try {
      const results = await Promise.race([committing, giveUp]);
      if (results === "abandoned") {
        // Late results are dropped: the items have rejected already.
        committing.catch(() => {});
        for (const entry of group) this.settle(entry, () => entry.reject(this.options.timeoutError("timeout")));
        this.options.onAbandon?.();
        return;
      }
      this.stats.groups++;
      this.stats.items += group.length;
      group.forEach((entry, i) => {
        const result = results[i];
        this.settle(entry, () => (result instanceof ItemFailure ? entry.reject(result.error) : entry.resolve(result as Result)));
      });
    } catch (error) {
      for (const entry of group) this.settle(entry, () => entry.reject(error));
    } finally {
      clearTimeout(watchdog);
      this.inFlight--;
      // Items that queued while this group was in flight have waited already: no need to
      // wait for another turn.
      this.start();
    }
  }

  /** An item still queued at its time: out of the queue, never sent. */
  private expire(entry: Entry<Item, Result>): void {
    const queued = this.queue.indexOf(entry);
    if (queued < 0) return;
    this.queue.splice(queued, 1);
    this.settle(entry, () => entry.reject(this.options.timeoutError("timeout")));
  }

  private settle(entry: Entry<Item, Result>, how: () => void): void {
    if (entry.settled) return;
    entry.settled = true;
    if (entry.timer !== undefined) clearTimeout(entry.timer);
    how();
    if (--this.unsettled === 0) for (const wake of this.idleWaiters.splice(0)) wake();
  }
}

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
   * A group still in flight after this many milliseconds (0: never) is given up: its slot
   * is freed for the next group, and `onAbandon` runs (to replace connections that may
   * hang for good: a partition that dropped them silently). Its items have rejected at
   * their own time already.
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
 *
 * A bounded wait: an item still queued when its time is up is taken out of the queue and
 * rejects with `timeoutError()`, so it was certainly not applied. An item whose group is
 * already in flight cannot be recalled: it rejects at its time all the same, and its group
 * may still commit later (applied, but never reported as applied: a charge answered 503
 * that was counted, never a counted charge that was lost). A queue full to `maxQueued`
 * refuses new items at once with the same error. A group that hangs is abandoned after a
 * while (see `abandonAfterMs`), so that one dead connection cannot hold a slot for good.
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
    private readonly commit: (items: readonly Item[]) => Promise<readonly (Result | ItemFailure)[]>,
    private readonly options: AsyncGroupCommitOptions,
  ) {}

  /** Queues an item; resolves with its result once its group has committed. */
  submit(item: Item): Promise<Result> {
    if (this.queue.length >= this.options.maxQueued) return Promise.reject(this.options.timeoutError("queue-full"));
    this.unsettled++;
    return new Promise((resolve, reject) => {
      const entry: Entry<Item, Result> = { item, resolve, reject, settled: false };
      if (this.options.timeoutMs > 0) {
        entry.timer = setTimeout(() => this.expire(entry), this.options.timeoutMs);
      }
      this.queue.push(entry);
      this.schedule();
    });
  }

  /**
   * Starts groups for everything queued, and resolves once every item submitted has
   * settled: committed, failed, or rejected at its time. A group in flight whose items
   * have all rejected already (a database gone silent) is not waited for: nobody waits
   * for its outcome, and it may be cut short (see the class's notes on items past their
   * time).
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
      this.inFlight++;
      void this.run(group);
    }
  }

  private async run(group: Entry<Item, Result>[]): Promise<void> {
    let watchdog: ReturnType<typeof setTimeout> | undefined;
    const giveUp = new Promise<"abandoned">((resolve) => {
      if (this.options.abandonAfterMs) watchdog = setTimeout(() => resolve("abandoned"), this.options.abandonAfterMs);
    });
    const committing = this.commit(group.map((entry) => entry.item));
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

  private expire(entry: Entry<Item, Result>): void {
    const queued = this.queue.indexOf(entry);
    if (queued >= 0) this.queue.splice(queued, 1);
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

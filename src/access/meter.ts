import { ApiError } from "../errors/api-error.ts";
import { ClientGoneError } from "../errors/client-gone.ts";
import { billingPeriod, periodTime, type BillingPeriod } from "../store/period.ts";
import type { ActiveKey, ChargeOutcome, Store } from "../store/store.ts";
import type { KeyCache } from "./key-cache.ts";
import type { StoreHealth } from "./store-health.ts";
import { unknownKeyError } from "./unknown-key.ts";

/** What a charged request reports back in its `X-Units-*` headers. */
export interface Metered {
  readonly consumed: number;
  /** Null for a plan without a unit limit. */
  readonly remaining: number | null;
}

/** What a charge knows of its request. */
export interface ChargeOptions {
  /** The request's signal: a client gone before the commit is charged nothing. */
  readonly signal?: AbortSignal;
  /** When the server took the request (performance.now()). */
  readonly receivedAt?: number;
  /** The request's connection, which may know its client gone before the signal does. */
  readonly connection?: ClientConnection;
}

/** What a charge may ask of its request's connection. */
export interface ClientConnection {
  /**
   * Whether the client is known to have gone. With `askSocket`, the socket is asked now
   * (a system call: a few per cent of a single lookup's time, nothing beside a batch's);
   * without, only what is known already counts, at no cost.
   */
  clientGone(askSocket: boolean): boolean;
}

/**
 * A request that came this long before its charge has most likely waited on its thread's
 * own work (a large batch, or requests read in the same turn of the event loop and
 * handled before it), and the loop has not read the sockets since: a client that reset
 * its connection meanwhile is not seen gone yet, and would be charged for an answer
 * nobody receives (CONTRACT §13). Such a charge first lets the loop take SEE_GONE_TURNS
 * turns (timers, about a millisecond each: they read the sockets, which the store's
 * setImmediate flush does not), so the reset is seen, and then asks the socket (see
 * ClientConnection). One turn was not enough: Bun tells a request's signal of its
 * connection's reset a turn or two after it reads it, and batches whose clients had
 * reset 175–300 ms before were answered and charged (the test of twenty such batches saw
 * 1–6 of them gone, not the ten it asks for, in most runs); with three, every run saw
 * them. A quicker request does not wait, but for a large batch's shorter wait (below).
 */
const SEE_GONE_AFTER_MS = 20;
const SEE_GONE_TURNS = 3;

/**
 * A batch asks the socket whether its client is still there before it is charged (see
 * ClientConnection): Bun knows a connection reset, or a close it has read, before it
 * tells the request's signal. That costs about a microsecond, nothing beside a batch's
 * work (batches of 100, paired runs against asking nothing: no difference the runs could
 * tell), but some per cent of a single lookup's, which is not asked.
 *
 * A batch of BATCH_TURNS_FROM_UNITS or more first lets the loop take BATCH_SEE_GONE_TURNS
 * turns of Bun.sleep(0) (not a timer's millisecond), so that it reads a close that came
 * while the batch was worked on: the first turn's wake-up comes before the loop reads
 * the sockets, the second after (Bun 1.4, measured). Without them, batches of 10,000 whose clients closed
 * their connections as soon as they had sent them were charged every time; with them,
 * most such closes are seen, not all: of batches of 1,000–2,000, about 1 to 4 in 8 were
 * still charged (four turns did no better), of 5,000 none (docs/security.md). The turns
 * cost a batch about 10 µs of the thread's time (paired runs of batches of 100 under
 * load: 8–14 µs more a batch, some 10% of its time), about 1% of a batch of 1,000's;
 * a smaller batch does not take them.
 */
const BATCH_TURNS_FROM_UNITS = 1000;
const BATCH_SEE_GONE_TURNS = 2;

/** Charges units to a key's monthly quota, all or nothing. */
export class Meter {
  /** The period of the last charge: every charge of a month shares it. */
  private period: BillingPeriod | undefined;

  constructor(
    private readonly store: Store,
    private readonly now: () => Date,
    /** Told of each charge's success or failure: a store whose health follows its writes (see StoreHealth). */
    private readonly health?: Pick<StoreHealth, "wrote" | "writeFailed">,
    /** The cache the keys come from, told when a charge finds its key gone from the store. */
    private readonly keys?: Pick<KeyCache, "keyGone">,
  ) {}

  /**
   * Charges `units` to the key, or throws `quota_exceeded` without charging anything.
   * Resolves once the units are committed. With the request's `signal` and `connection`,
   * a client seen gone before the commit is charged nothing, and ClientGoneError is thrown.
   * A key the store no longer holds (deleted while the key cache held it) is charged
   * nothing and refused with `invalid_key`, as any unknown key, and the cache reloads.
   */
  async charge(active: ActiveKey, units: number, options?: ChargeOptions): Promise<Metered> {
    const signal = options?.signal;
    if (options !== undefined && !signal?.aborted) {
      // The socket is asked only where the wait, or the batch's own work, dwarfs the cost.
      const longAgo = options.receivedAt !== undefined && performance.now() - options.receivedAt >= SEE_GONE_AFTER_MS;
      const askSocket = longAgo || units > 1;
      if (longAgo) {
        for (let turn = 0; turn < SEE_GONE_TURNS; turn++) await new Promise((resolve) => setTimeout(resolve, 0));
      } else if (units >= BATCH_TURNS_FROM_UNITS && options.connection !== undefined) {
        for (let turn = 0; turn < BATCH_SEE_GONE_TURNS; turn++) await Bun.sleep(0);
      }
      // Seen gone later, before the commit, by its signal: the store looks at it.
      if (options.connection?.clientGone(askSocket)) throw new ClientGoneError();
    }
    const limit = active.plan.monthlyUnits;
    const now = this.now();
    const period = this.periodOf(now);
    // `at`, from the clock that chose the period, puts the request on its UTC day.
    let outcome: ChargeOutcome;
    const startedAt = performance.now();
    try {
      outcome = await this.store.charge({ keyId: active.key.id, period: period.id, units, limit, at: now.getTime(), signal });
    } catch (error) {
      this.health?.writeFailed(error);
      throw error;
    }
    this.health?.wrote(startedAt);
    if (outcome.gone) throw new ClientGoneError();
    if (outcome.keyGone) {
      this.keys?.keyGone();
      throw unknownKeyError();
    }
    const remaining = limit === null ? null : Math.max(0, limit - outcome.used);
    if (!outcome.ok) {
      const end = periodTime(period.end);
      throw new ApiError(
        "quota_exceeded",
        `this request needs ${units} unit${units === 1 ? "" : "s"}; the key has ${remaining} left until ${end}`,
        { units_requested: units, units_remaining: remaining, period_end: end },
      );
    }
    return { consumed: units, remaining };
  }

  private periodOf(now: Date): BillingPeriod {
    const time = now.getTime();
    const last = this.period;
    if (last && time >= last.start.getTime() && time < last.end.getTime()) return last;
    return (this.period = billingPeriod(now));
  }
}

import { ApiError } from "../errors/api-error.ts";
import { ClientGoneError } from "../errors/client-gone.ts";
import { billingPeriod, type BillingPeriod } from "../store/period.ts";
import type { ActiveKey, Store } from "../store/store.ts";

/** What a charged request reports back in its `X-Units-*` headers. */
export interface Metered {
  readonly consumed: number;
  /** Null for a plan without a unit limit. */
  readonly remaining: number | null;
}

/** Charges units to a key's monthly quota, all or nothing. */
export class Meter {
  /** The period of the last charge: every charge of a month shares it. */
  private period: BillingPeriod | undefined;

  constructor(
    private readonly store: Store,
    private readonly now: () => Date,
  ) {}

  /**
   * Charges `units` to the key, or throws `quota_exceeded` without charging anything.
   * Resolves once the units are committed. With the request's `signal`, a client that
   * has gone before the commit is charged nothing, and ClientGoneError is thrown.
   */
  async charge(active: ActiveKey, units: number, options?: { readonly signal?: AbortSignal }): Promise<Metered> {
    const limit = active.plan.monthlyUnits;
    const now = this.now();
    const period = this.periodOf(now);
    // `at`, from the clock that chose the period, puts the request on its UTC day.
    const outcome = await this.store.charge({ keyId: active.key.id, period: period.id, units, limit, at: now.getTime(), signal: options?.signal });
    if (outcome.gone) throw new ClientGoneError();
    const remaining = limit === null ? null : Math.max(0, limit - outcome.used);
    if (!outcome.ok) {
      throw new ApiError(
        "quota_exceeded",
        `this request needs ${units} unit${units === 1 ? "" : "s"}; the key has ${remaining} left until ${period.end.toISOString()}`,
        { units_requested: units, units_remaining: remaining, period_end: period.end.toISOString() },
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

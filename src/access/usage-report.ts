import { billingPeriod, periodTime } from "../store/period.ts";
import type { ApiKey, Plan, Store } from "../store/store.ts";

/** The usage answer of `GET /v1/usage` and `iplookup usage ID --json` (CONTRACT §4). */
export interface UsageReport {
  key: { id: string; name: string };
  plan: { name: string; max_batch_size: number; monthly_units: number | null; rate_limit: number | null };
  period: { start: string; end: string };
  units: { used: number; limit: number | null; remaining: number | null };
}

export async function usageReport(store: Store, key: ApiKey, plan: Plan, now: Date): Promise<UsageReport> {
  const period = billingPeriod(now);
  const used = await store.unitsUsed(key.id, period.id);
  const limit = plan.monthlyUnits;
  return {
    key: { id: key.id, name: key.name },
    plan: { name: plan.name, max_batch_size: plan.maxBatchSize, monthly_units: limit, rate_limit: plan.rateLimit },
    period: { start: periodTime(period.start), end: periodTime(period.end) },
    units: { used, limit, remaining: limit === null ? null : Math.max(0, limit - used) },
  };
}

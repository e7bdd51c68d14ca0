/**
 * `usage.threshold` (CONTRACT §16): a key's units in a period cross 80%, 90% and 100% of
 * its plan's monthly units. The stores decide it inside the charge's own transaction,
 * from the units used before and after the charge, and record each crossing with a
 * unique key (key, period, threshold): however many workers and hosts charge at once,
 * only one transaction moves the count across a line, and a second record of it would
 * be refused by the constraint anyway. So each fires exactly once per key, threshold and
 * period. (A plan changed in the middle of a period does not fire a line again.)
 */
export const USAGE_THRESHOLDS = [80, 90, 100] as const;

/**
 * The thresholds (percent) that `before` → `after` units cross against `limit`, lowest
 * first: a line is crossed when before < line ≤ after, in whole-number arithmetic (no
 * rounding: 80% of 7 units is crossed at 6, since 6 × 100 ≥ 80 × 7).
 */
export function crossedThresholds(before: number, after: number, limit: number | null): number[] {
  if (limit === null || limit <= 0 || after <= before) return [];
  return USAGE_THRESHOLDS.filter((percent) => before * 100 < percent * limit && after * 100 >= percent * limit);
}

/** Whether before → after crosses any line: the charge path's cheap test (no allocation). */
export function crossesThreshold(before: number, after: number, limit: number | null): boolean {
  if (limit === null || limit <= 0 || after <= before) return false;
  for (const percent of USAGE_THRESHOLDS) if (before * 100 < percent * limit && after * 100 >= percent * limit) return true;
  return false;
}

/** The unique key that records a crossing: one row per key, period and threshold. */
export function thresholdOnceKey(keyId: string, period: string, percent: number): string {
  return `usage.threshold ${keyId} ${period} ${percent}`;
}

/** The `data` of a usage.threshold event. */
export function thresholdData(key: { id: string; name: string; plan: string }, period: string, percent: number, used: number, limit: number) {
  return { key: { id: key.id, name: key.name, plan: key.plan }, period, threshold: percent, units: { used, limit } };
}

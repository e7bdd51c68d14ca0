/**
 * The console's rules that need no page, kept apart so that they are tested at their
 * edges without a browser (test/admin/console-rules.test.ts).
 */

/**
 * A data set whose newest source is older than this is flagged as stale (the README says
 * so): the public registries and RIR files behind the default data change daily, and a
 * monthly update leaves at most about 31 days.
 */
export const STALE_AFTER_DAYS = 35;

/**
 * The time a data set's age is judged by: its newest source of network data (a file
 * built today from June's sources is June's data), not a list of signals, which says
 * nothing of how fresh the ranges are (the hosting list is reviewed by hand); the file's
 * own time when no such source states one.
 */
export function dataSetTime(sources: readonly { readonly built_at: string | null; readonly signal?: string | null }[], fileBuiltAt: string): string {
  const stated = sources.filter((source) => !source.signal && source.built_at !== null).map((source) => source.built_at as string);
  return stated.length > 0 ? stated.reduce((a, b) => (Date.parse(a) > Date.parse(b) ? a : b)) : fileBuiltAt;
}

/** Whether a time (ISO 8601) is more than STALE_AFTER_DAYS before `nowMs`. */
export function isStale(iso: string, nowMs: number): boolean {
  return nowMs - Date.parse(iso) > STALE_AFTER_DAYS * 86_400_000;
}

/** The chart shows at least this many days, so that one day of use is not a lone bar at an edge. */
export const LEAST_DAYS_SHOWN = 7;

/**
 * The first day the chart shows, as an index into the span's days: the day before the
 * first use, or earlier so that LEAST_DAYS_SHOWN days show; the whole span without use.
 */
export function firstShownDay(units: readonly number[]): number {
  const firstUse = units.findIndex((value) => value > 0);
  return firstUse < 0 ? 0 : Math.max(0, Math.min(firstUse - 1, units.length - LEAST_DAYS_SHOWN));
}

/** The y axis's steps: whole units only (1, 2, 5, 10, 20, 50, …). */
export const WHOLE_STEPS: readonly number[] = Array.from({ length: 13 }, (_, power) => [1, 2, 5].map((step) => step * 10 ** power)).flat();

/**
 * A correction's AS number as typed: `13335`, `AS13335` or `as13335` (as the AS lookup box
 * takes it) is the number; other text is sent as it is, for the admin API to refuse in
 * its own words.
 */
export function correctionAsn(text: string): number | string {
  const number = /^(?:as)?(\d+)$/i.exec(text.trim());
  return number ? Number(number[1]) : text;
}

/**
 * A key's metadata as typed: empty is none (null); anything else must be a JSON object,
 * said plainly here rather than in the admin API's schema wording ("should be one of:
 * 'object', 'null'"). Throws an Error whose message says what to write instead.
 */
export function keyMetadata(text: string): Record<string, unknown> | null {
  const trimmed = text.trim();
  if (trimmed === "") return null;
  const example = 'an object such as {"team": "maps"}, or leave it empty';
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch {
    throw new Error(`Metadata is not JSON: write ${example}`);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    const what = Array.isArray(parsed) ? "a list" : parsed === null ? "null" : typeof parsed === "string" ? "a string" : typeof parsed === "number" ? "a number" : "true or false";
    throw new Error(`Metadata must be a JSON object of named values, not ${what}: write ${example}`);
  }
  return parsed as Record<string, unknown>;
}

/** A plan's three limits, as the admin API names them (null: unlimited). */
export interface PlanLimits {
  readonly max_batch_size: number;
  readonly monthly_units: number | null;
  readonly rate_limit: number | null;
}
export type PlanLimit = keyof PlanLimits;
export const PLAN_LIMIT_NAMES: readonly PlanLimit[] = ["max_batch_size", "monthly_units", "rate_limit"];

/**
 * What a plan row's Save sends (`PUT` takes all three limits), from the limits the row
 * was drawn with, those in its boxes, and the plan's as read again just before saving:
 * a limit not changed in the row is sent as it is now, so that a change made meanwhile
 * elsewhere (`plans set free --rate-limit 50`) stays, as a flag left out of `plans set`
 * keeps its value (CONTRACT §4); a limit changed in the row is sent as typed. A limit
 * changed in the row that was also changed elsewhere since the row was drawn, to another
 * value than the one typed, is a conflict: nothing is to be sent, and `conflicts` names
 * those limits.
 */
export function planSave(drawn: PlanLimits, typed: PlanLimits, current: PlanLimits): { readonly body: PlanLimits } | { readonly conflicts: readonly PlanLimit[] } {
  const conflicts = PLAN_LIMIT_NAMES.filter((limit) => typed[limit] !== drawn[limit] && current[limit] !== drawn[limit] && typed[limit] !== current[limit]);
  if (conflicts.length > 0) return { conflicts };
  const pick = <K extends PlanLimit>(limit: K): PlanLimits[K] => (typed[limit] !== drawn[limit] ? typed[limit] : current[limit]);
  return { body: { max_batch_size: pick("max_batch_size"), monthly_units: pick("monthly_units"), rate_limit: pick("rate_limit") } };
}

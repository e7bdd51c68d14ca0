import { StoreError, type Plan, type PlanChanges } from "./store.ts";

/** The public (JSON) names of a plan's settings, used in messages. */
const FIELD_NAMES = { maxBatchSize: "max_batch_size", monthlyUnits: "monthly_units", rateLimit: "rate_limit" } as const;
const FIELDS = Object.keys(FIELD_NAMES) as (keyof PlanChanges)[];
/**
 * The largest value of each setting, the same on every store and every path (CLI, admin
 * API, state copy): PostgreSQL keeps the batch size and the rate in 32-bit integers, the
 * units a month in 64-bit ones, of which JSON numbers hold exactly 2^53 − 1.
 */
export const PLAN_MAXIMA = { maxBatchSize: 2_147_483_647, monthlyUnits: Number.MAX_SAFE_INTEGER, rateLimit: 2_147_483_647 } as const;

const PLAN_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/**
 * The plan that `changes` make of `existing` (null: the plan is new). Throws StoreError
 * for a bad name or value, or for a new plan that leaves a setting out.
 */
export function applyPlanChanges(name: string, existing: Plan | null, changes: PlanChanges): Plan {
  if (!PLAN_NAME.test(name)) {
    throw new StoreError(`"${name}" is not a plan name: 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit`);
  }
  if (changes.maxBatchSize === null) throw new StoreError("max_batch_size cannot be unlimited");
  for (const field of FIELDS) {
    const value = changes[field];
    if (value !== undefined && value !== null && !isPositiveInteger(value)) {
      throw new StoreError(`${FIELD_NAMES[field]} must be a whole number of at least 1${field === "maxBatchSize" ? "" : ", or unlimited"} (got ${String(value)})`);
    }
    if (typeof value === "number" && value > PLAN_MAXIMA[field]) {
      throw new StoreError(`${FIELD_NAMES[field]} must be at most ${PLAN_MAXIMA[field].toLocaleString("en-US")} (got ${value})`);
    }
  }
  if (existing === null) {
    const missing = FIELDS.filter((field) => changes[field] === undefined).map((field) => FIELD_NAMES[field]);
    if (missing.length > 0) {
      throw new StoreError(`the new plan "${name}" needs max_batch_size, monthly_units and rate_limit; missing: ${missing.join(", ")}`);
    }
  }
  return {
    name,
    maxBatchSize: changes.maxBatchSize ?? existing!.maxBatchSize,
    monthlyUnits: changes.monthlyUnits !== undefined ? changes.monthlyUnits : existing!.monthlyUnits,
    rateLimit: changes.rateLimit !== undefined ? changes.rateLimit : existing!.rateLimit,
  };
}

function isPositiveInteger(value: unknown): boolean {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 1;
}

/** Whether `plan` is what `existing` already is (null: there was none), every limit alike. */
export function samePlan(existing: Plan | null, plan: Plan): boolean {
  return existing !== null && existing.maxBatchSize === plan.maxBatchSize && existing.monthlyUnits === plan.monthlyUnits && existing.rateLimit === plan.rateLimit;
}

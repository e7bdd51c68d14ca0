import { StoreError, type Plan, type PlanChanges } from "./store.ts";

/** The public (JSON) names of a plan's settings, used in messages. */
const FIELD_NAMES = { maxBatchSize: "max_batch_size", monthlyUnits: "monthly_units", rateLimit: "rate_limit" } as const;
const FIELDS = Object.keys(FIELD_NAMES) as (keyof PlanChanges)[];

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

import { expect, test } from "bun:test";
import { applyPlanChanges } from "../../src/store/plan-rules.ts";
import { StoreError, type Plan, type PlanChanges } from "../../src/store/store.ts";

const gold: Plan = { name: "gold", maxBatchSize: 10, monthlyUnits: 500, rateLimit: 3 };

test("a new plan takes every field", () => {
  expect(applyPlanChanges("gold", null, { maxBatchSize: 10, monthlyUnits: null, rateLimit: 3 })).toEqual({ name: "gold", maxBatchSize: 10, monthlyUnits: null, rateLimit: 3 });
});

test("a new plan missing fields is refused, naming them", () => {
  expect(() => applyPlanChanges("gold", null, { maxBatchSize: 10 })).toThrow(new StoreError('the new plan "gold" needs max_batch_size, monthly_units and rate_limit; missing: monthly_units, rate_limit'));
  expect(() => applyPlanChanges("gold", null, {})).toThrow(/missing: max_batch_size, monthly_units, rate_limit$/);
  expect(() => applyPlanChanges("gold", null, { maxBatchSize: 1, monthlyUnits: 1 })).toThrow(/missing: rate_limit$/);
});

test("an existing plan keeps what is left out; null makes a limit unlimited", () => {
  expect(applyPlanChanges("gold", gold, {})).toEqual(gold);
  expect(applyPlanChanges("gold", gold, { rateLimit: 7 })).toEqual({ ...gold, rateLimit: 7 });
  expect(applyPlanChanges("gold", gold, { monthlyUnits: null })).toEqual({ ...gold, monthlyUnits: null });
  expect(applyPlanChanges("gold", gold, { maxBatchSize: 1, monthlyUnits: 1, rateLimit: 1 })).toEqual({ name: "gold", maxBatchSize: 1, monthlyUnits: 1, rateLimit: 1 });
});

test.each<[PlanChanges, RegExp]>([
  [{ maxBatchSize: 0 }, /max_batch_size must be a whole number of at least 1/],
  [{ maxBatchSize: null as unknown as number }, /max_batch_size cannot be unlimited/],
  [{ maxBatchSize: 2.5 }, /max_batch_size/],
  [{ monthlyUnits: 0 }, /monthly_units must be a whole number of at least 1, or unlimited/],
  [{ monthlyUnits: -5 }, /monthly_units/],
  [{ monthlyUnits: Number.NaN }, /monthly_units/],
  [{ rateLimit: Number.POSITIVE_INFINITY }, /rate_limit/],
  [{ rateLimit: 2 ** 53 }, /rate_limit/],
  [{ rateLimit: "5" as unknown as number }, /rate_limit/],
])("%p is refused", (changes, message) => {
  expect(() => applyPlanChanges("gold", gold, changes)).toThrow(StoreError);
  expect(() => applyPlanChanges("gold", gold, changes)).toThrow(message);
});

test("plan names are 1 to 64 letters, digits, '.', '_', '-', starting with a letter or digit", () => {
  for (const name of ["a", "Pro-2", "team_a.v2", "x".repeat(64)]) expect(applyPlanChanges(name, gold, {}).name).toBe(name);
  for (const name of ["", "bad name", "-x", ".x", "x".repeat(65), "é", "a/b"]) {
    expect(() => applyPlanChanges(name, gold, {})).toThrow(/is not a plan name/);
  }
});

test("a setting past what every store keeps is refused, the same on every path: batch size and rate to 2,147,483,647, units a month to 2^53 − 1", () => {
  expect(applyPlanChanges("gold", gold, { maxBatchSize: 2_147_483_647, rateLimit: 2_147_483_647, monthlyUnits: Number.MAX_SAFE_INTEGER })).toMatchObject({ maxBatchSize: 2_147_483_647 });
  expect(() => applyPlanChanges("gold", gold, { maxBatchSize: 2_147_483_648 })).toThrow(new StoreError("max_batch_size must be at most 2,147,483,647 (got 2147483648)"));
  expect(() => applyPlanChanges("gold", gold, { rateLimit: 3_000_000_000 })).toThrow(new StoreError("rate_limit must be at most 2,147,483,647 (got 3000000000)"));
});

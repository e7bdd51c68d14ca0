import { expect, test } from "bun:test";
import { correctionAsn, dataSetTime, firstShownDay, isStale, keyMetadata, LEAST_DAYS_SHOWN, planSave, STALE_AFTER_DAYS, WHOLE_STEPS } from "../../src/admin/console/rules.ts";

const DAY = 86_400_000;

test("stale: older than 35 days, not at 35 days", () => {
  const now = Date.parse("2026-11-25T12:00:00Z");
  expect(STALE_AFTER_DAYS).toBe(35);
  expect(isStale(new Date(now - 35 * DAY).toISOString(), now)).toBe(false);
  expect(isStale(new Date(now - 35 * DAY - 1000).toISOString(), now)).toBe(true);
  expect(isStale("2026-06-17T19:00:00.000Z", now)).toBe(true);
});

test("the chart starts a day before the first use, with a week at least; all of it without use", () => {
  const days = (used: number[]) => Array.from({ length: 30 }, (_, i) => (used.includes(i) ? 3 : 0));
  expect(LEAST_DAYS_SHOWN).toBe(7);
  expect(firstShownDay(days([29]))).toBe(23);
  expect(firstShownDay(days([10, 29]))).toBe(9);
  expect(firstShownDay(days([0]))).toBe(0);
  expect(firstShownDay(days([]))).toBe(0);
});

test("the y axis steps are whole numbers", () => {
  expect(WHOLE_STEPS.slice(0, 6)).toEqual([1, 2, 5, 10, 20, 50]);
  expect(WHOLE_STEPS.every(Number.isInteger)).toBe(true);
});

test("a data set's age is its newest source of network data's; a list of signals does not make it fresh", () => {
  const june = "2026-06-17T19:00:00.000Z";
  const sources = [
    { built_at: june, signal: null },
    { built_at: "2026-05-01T00:00:00.000Z", signal: null },
    { built_at: "2026-11-25T00:00:00.000Z", signal: "hosting" },
    { built_at: null, signal: null },
  ];
  expect(dataSetTime(sources, "2026-11-25T09:00:00.000Z")).toBe(june);
  expect(dataSetTime([{ built_at: "2026-11-25T00:00:00.000Z", signal: "tor" }], "2026-11-20T00:00:00.000Z")).toBe("2026-11-20T00:00:00.000Z");
  expect(dataSetTime([], "2026-11-20T00:00:00.000Z")).toBe("2026-11-20T00:00:00.000Z");
});

test("a correction's AS number may be typed with AS or as before it; other text is sent as typed", () => {
  expect([correctionAsn("13335"), correctionAsn("AS13335"), correctionAsn("as64500"), correctionAsn(" As0 ")]).toEqual([13335, 13335, 64500, 0]);
  expect([correctionAsn("AS-1"), correctionAsn("ASN13335"), correctionAsn("cloud")]).toEqual(["AS-1", "ASN13335", "cloud"]);
});

test("a key's metadata is a JSON object or nothing: a list, null, a string or a number is refused in plain words", () => {
  expect(keyMetadata("  ")).toBeNull();
  expect(keyMetadata('{"team": "maps"}')).toEqual({ team: "maps" });
  for (const [typed, what] of [["[1,2]", "a list"], ["null", "null"], ['"maps"', "a string"], ["7", "a number"], ["true", "true or false"]] as const) {
    expect(() => keyMetadata(typed)).toThrow(`Metadata must be a JSON object of named values, not ${what}: write an object such as {"team": "maps"}, or leave it empty`);
  }
  expect(() => keyMetadata("{team: maps}")).toThrow("Metadata is not JSON");
});

test("a plan row's Save: a limit not changed in the row is sent as it is now, a changed one as typed; one changed in both places is a conflict", () => {
  const drawn = { max_batch_size: 100, monthly_units: 100_000, rate_limit: 10 };
  // Nothing typed: the plan as it is now.
  expect(planSave(drawn, drawn, { ...drawn, rate_limit: 50 })).toEqual({ body: { max_batch_size: 100, monthly_units: 100_000, rate_limit: 50 } });
  // Max batch typed, the rate changed elsewhere: both kept.
  expect(planSave(drawn, { ...drawn, max_batch_size: 200 }, { ...drawn, rate_limit: 50 })).toEqual({ body: { max_batch_size: 200, monthly_units: 100_000, rate_limit: 50 } });
  // Unlimited is a value like another, both ways.
  expect(planSave(drawn, { ...drawn, rate_limit: null }, { ...drawn, monthly_units: null })).toEqual({ body: { max_batch_size: 100, monthly_units: null, rate_limit: null } });
  expect(planSave({ ...drawn, monthly_units: null }, { ...drawn, monthly_units: null, max_batch_size: 5 }, { ...drawn, monthly_units: 7 })).toEqual({ body: { max_batch_size: 5, monthly_units: 7, rate_limit: 10 } });
  // Typed back to what the row showed: not a change.
  expect(planSave(drawn, drawn, { ...drawn, max_batch_size: 1 })).toEqual({ body: { ...drawn, max_batch_size: 1 } });
  // Changed in both places: named, nothing to send; changed to the same value in both, no conflict.
  expect(planSave(drawn, { ...drawn, rate_limit: 20, max_batch_size: 300 }, { ...drawn, rate_limit: 50 })).toEqual({ conflicts: ["rate_limit"] });
  expect(planSave(drawn, { ...drawn, rate_limit: 50 }, { ...drawn, rate_limit: 50 })).toEqual({ body: { ...drawn, rate_limit: 50 } });
  expect(planSave(drawn, { max_batch_size: 1, monthly_units: null, rate_limit: 2 }, { max_batch_size: 2, monthly_units: 3, rate_limit: 10 })).toEqual({ conflicts: ["max_batch_size", "monthly_units"] });
});

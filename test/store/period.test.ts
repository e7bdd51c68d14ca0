import { expect, test } from "bun:test";
import { billingPeriod, isPeriodId } from "../../src/store/period.ts";

test.each([
  ["2026-11-15T12:00:00Z", "2026-11", "2026-11-01T00:00:00.000Z", "2026-12-01T00:00:00.000Z"],
  ["2026-11-01T00:00:00Z", "2026-11", "2026-11-01T00:00:00.000Z", "2026-12-01T00:00:00.000Z"],
  ["2026-10-31T23:59:59.999Z", "2026-10", "2026-10-01T00:00:00.000Z", "2026-11-01T00:00:00.000Z"],
  // December rolls over into January of the next year.
  ["2026-12-31T23:59:59.999Z", "2026-12", "2026-12-01T00:00:00.000Z", "2027-01-01T00:00:00.000Z"],
  ["2027-01-01T00:00:00Z", "2027-01", "2027-01-01T00:00:00.000Z", "2027-02-01T00:00:00.000Z"],
  // February of a leap year has 29 days, of other years 28.
  ["2028-02-29T23:59:59.999Z", "2028-02", "2028-02-01T00:00:00.000Z", "2028-03-01T00:00:00.000Z"],
  ["2028-03-01T00:00:00Z", "2028-03", "2028-03-01T00:00:00.000Z", "2028-04-01T00:00:00.000Z"],
  ["2027-02-28T23:59:59.999Z", "2027-02", "2027-02-01T00:00:00.000Z", "2027-03-01T00:00:00.000Z"],
  // The month is the UTC month, whatever offset the time was written with.
  ["2026-12-01T00:30:00+01:00", "2026-11", "2026-11-01T00:00:00.000Z", "2026-12-01T00:00:00.000Z"],
  ["2026-11-30T23:30:00-01:00", "2026-12", "2026-12-01T00:00:00.000Z", "2027-01-01T00:00:00.000Z"],
])("%s is in %s", (now, id, start, end) => {
  const period = billingPeriod(new Date(now));
  expect(period.id).toBe(id);
  expect(period.start.toISOString()).toBe(start);
  expect(period.end.toISOString()).toBe(end);
});

test("a year below 100 is not read as 19xx", () => {
  const period = billingPeriod(new Date("0050-12-10T00:00:00Z"));
  expect(period.id).toBe("0050-12");
  expect(period.start.toISOString()).toBe("0050-12-01T00:00:00.000Z");
  expect(period.end.toISOString()).toBe("0051-01-01T00:00:00.000Z");
});

test("an invalid date has no period", () => {
  expect(() => billingPeriod(new Date("not a date"))).toThrow(RangeError);
});

test("period ids are YYYY-MM", () => {
  for (const id of ["2026-01", "2026-12", "0050-12"]) expect(isPeriodId(id)).toBe(true);
  for (const id of ["2026-1", "2026-13", "2026-00", "26-01", "2026-01-01", " 2026-01", ""]) expect(isPeriodId(id)).toBe(false);
});

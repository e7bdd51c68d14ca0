import { expect, test } from "bun:test";
import { billingPeriod } from "../../src/store/period.ts";

test.each([
  ["2026-11-15T12:00:00Z", "2026-11", "2026-11-01T00:00:00.000Z", "2026-12-01T00:00:00.000Z"],
  ["2026-12-31T23:59:59.999Z", "2026-12", "2026-12-01T00:00:00.000Z", "2027-01-01T00:00:00.000Z"],
  ["2027-01-01T00:00:00Z", "2027-01", "2027-01-01T00:00:00.000Z", "2027-02-01T00:00:00.000Z"],
  ["2028-02-29T10:00:00Z", "2028-02", "2028-02-01T00:00:00.000Z", "2028-03-01T00:00:00.000Z"],
])("%s is in %s", (now, id, start, end) => {
  const period = billingPeriod(new Date(now));
  expect(period.id).toBe(id);
  expect(period.start.toISOString()).toBe(start);
  expect(period.end.toISOString()).toBe(end);
});

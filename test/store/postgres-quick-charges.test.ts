import { expect, test } from "bun:test";
import { planQuickCharges } from "../../src/store/postgres-quick-charges.ts";
import type { Charge } from "../../src/store/store.ts";

const AT = Date.parse("2026-11-20T10:00:00Z");
const charge = (keyId: string, units: number, more: Partial<Charge> = {}): Charge => ({ keyId, period: "2026-11", units, limit: null, at: AT, ...more });
const summary = (group: Charge[], refused: ReadonlySet<string> = new Set()) => {
  const plan = planQuickCharges(group, () => AT, refused);
  return { rows: plan.rows.map((row) => ({ keyId: row.keyId, period: row.period, total: row.total, charges: row.charges, days: row.days.list() })), rest: plan.rest };
};

test("charges are gathered by key and period, in order, with their sum and their day rows", () => {
  const group = [charge("a", 2), charge("b", 5), charge("a", 3, { at: AT + 60_000 }), charge("a", 1, { period: "2026-12", at: Date.parse("2026-12-01T00:00:00Z") })];
  expect(summary(group)).toEqual({
    rows: [
      { keyId: "a", period: "2026-11", total: 5, charges: [0, 2], days: [{ keyId: "a", day: "2026-11-20", requests: 2, units: 5, lastUsedAt: new Date(AT + 60_000).toISOString() }] },
      { keyId: "b", period: "2026-11", total: 5, charges: [1], days: [{ keyId: "b", day: "2026-11-20", requests: 1, units: 5, lastUsedAt: new Date(AT).toISOString() }] },
      { keyId: "a", period: "2026-12", total: 1, charges: [3], days: [{ keyId: "a", day: "2026-12-01", requests: 1, units: 1, lastUsedAt: "2026-12-01T00:00:00.000Z" }] },
    ],
    rest: [],
  });
});

test("a charge of no units, one whose client has gone, or a second limit leaves its key and period to the transaction, charges before and after it too", () => {
  const gone = new AbortController();
  gone.abort();
  const group = [
    charge("zero", 1),
    charge("gone", 1),
    charge("plain", 1),
    charge("zero", 0),
    charge("gone", 2, { signal: gone.signal }),
    charge("limits", 1, { limit: 10 }),
    charge("limits", 1, { limit: 20 }),
    charge("zero", 4),
    charge("plain", 2),
  ];
  const plan = summary(group);
  expect(plan.rows.map((row) => [row.keyId, row.charges])).toEqual([["plain", [2, 8]]]);
  expect(plan.rest).toEqual([0, 1, 3, 4, 5, 6, 7]);
});

test("a key and period the transaction refused last is left to it", () => {
  const plan = summary([charge("a", 1), charge("b", 1), charge("a", 2), charge("b", 1, { period: "2026-12" })], new Set(["a 2026-11", "b 2026-12"]));
  expect(plan.rows.map((row) => [row.keyId, row.period, row.charges])).toEqual([["b", "2026-11", [1]]]);
  expect(plan.rest).toEqual([0, 2, 3]);
});

test("a charge without its time is put on the day of the clock given, asked for each such charge", () => {
  let reads = 0;
  const plan = planQuickCharges([charge("a", 1, { at: undefined }), charge("a", 1, { at: undefined })], () => (reads++, AT + 5));
  expect(plan.rows[0]!.days.list()).toEqual([{ keyId: "a", day: "2026-11-20", requests: 2, units: 2, lastUsedAt: new Date(AT + 5).toISOString() }]);
  expect(reads).toBe(2);
});

import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { StoreError, type Charge } from "../../src/store/store.ts";
import { tempStatePaths } from "./temp-state.ts";

const freshPath = tempStatePaths();
const PERIOD = "2026-11";

async function storeWithKey(path = freshPath(), plan = "free") {
  const store = SqliteStore.open(path);
  const { key } = await store.createKey("k", plan);
  const charge = (units: number, limit: number | null) => store.charge({ keyId: key.id, period: PERIOD, units, limit });
  return { store, keyId: key.id, charge };
}

describe("one charge at a time", () => {
  test("charges what fits, refuses what does not, and a refusal costs nothing", async () => {
    const { store, keyId, charge } = await storeWithKey();
    expect(await charge(4, 10)).toEqual({ ok: true, used: 4 });
    expect(await charge(7, 10)).toEqual({ ok: false, used: 4 });
    expect(await charge(6, 10)).toEqual({ ok: true, used: 10 });
    expect(await charge(1, 10)).toEqual({ ok: false, used: 10 });
    expect(await store.unitsUsed(keyId, PERIOD)).toBe(10);
    await store.close();
  });

  test("a charge larger than the whole quota is refused on an unused key", async () => {
    const { store, keyId, charge } = await storeWithKey();
    expect(await charge(11, 10)).toEqual({ ok: false, used: 0 });
    expect(await store.unitsUsed(keyId, PERIOD)).toBe(0);
    await store.close();
  });

  test("zero units charge nothing and always fit, even past a lowered limit", async () => {
    const { store, keyId, charge } = await storeWithKey();
    expect(await charge(0, 10)).toEqual({ ok: true, used: 0 });
    expect(await charge(8, 10)).toEqual({ ok: true, used: 8 });
    expect(await charge(0, 5)).toEqual({ ok: true, used: 8 });
    expect(await charge(0, 0)).toEqual({ ok: true, used: 8 });
    expect(await store.unitsUsed(keyId, PERIOD)).toBe(8);
    await store.close();
  });

  test("no limit: every charge fits, large numbers stay exact", async () => {
    const { store, keyId, charge } = await storeWithKey(freshPath(), "unlimited");
    expect(await charge(2 ** 40, null)).toEqual({ ok: true, used: 2 ** 40 });
    expect(await charge(1, null)).toEqual({ ok: true, used: 2 ** 40 + 1 });
    expect(await store.unitsUsed(keyId, PERIOD)).toBe(2 ** 40 + 1);
    await store.close();
  });

  test("each key and each period counts apart", async () => {
    const store = SqliteStore.open(freshPath());
    const a = (await store.createKey("a", "free")).key.id;
    const b = (await store.createKey("b", "free")).key.id;
    await store.charge({ keyId: a, period: "2026-11", units: 5, limit: 5 });
    expect(await store.charge({ keyId: a, period: "2026-12", units: 5, limit: 5 })).toEqual({ ok: true, used: 5 });
    expect(await store.charge({ keyId: b, period: "2026-11", units: 5, limit: 5 })).toEqual({ ok: true, used: 5 });
    expect(await store.charge({ keyId: a, period: "2026-11", units: 1, limit: 5 })).toEqual({ ok: false, used: 5 });
    expect(await store.unitsUsed(a, "2026-11")).toBe(5);
    expect(await store.unitsUsed(a, "2027-01")).toBe(0);
    expect(await store.unitsUsed("key_unknown", "2026-11")).toBe(0);
    await store.close();
  });

  test.each<[string, Partial<Charge>]>([
    ["negative units", { units: -1 }],
    ["fractional units", { units: 1.5 }],
    ["NaN units", { units: Number.NaN }],
    ["a negative limit", { limit: -1 }],
    ["a fractional limit", { limit: 2.5 }],
    ["a malformed period", { period: "2026-13" }],
  ])("%s are refused before touching the file", async (_, bad) => {
    const { store, keyId } = await storeWithKey();
    await expect(store.charge({ keyId, period: PERIOD, units: 1, limit: 10, ...bad })).rejects.toThrow(RangeError);
    expect(await store.unitsUsed(keyId, PERIOD)).toBe(0);
    await store.close();
  });
});

describe("concurrent charges", () => {
  test("200 at once against 1000 units spend exactly floor(1000 / 7) * 7", async () => {
    const { store, keyId, charge } = await storeWithKey();
    const outcomes = await Promise.all(Array.from({ length: 200 }, () => charge(7, 1000)));
    const granted = outcomes.filter((outcome) => outcome.ok);
    expect(granted).toHaveLength(142);
    // Every granted charge saw its own total: 7, 14, …, 994.
    expect(granted.map((outcome) => outcome.used).sort((a, b) => a - b)).toEqual(Array.from({ length: 142 }, (_, i) => 7 * (i + 1)));
    expect(outcomes.filter((outcome) => !outcome.ok).every((outcome) => outcome.used === 994)).toBe(true);
    expect(await store.unitsUsed(keyId, PERIOD)).toBe(994);
    await store.close();
  });

  test("two stores on the same file, charging at once, never overspend", async () => {
    const path = freshPath();
    const { store: a, keyId } = await storeWithKey(path);
    const b = SqliteStore.open(path);
    const charge = (store: SqliteStore) => store.charge({ keyId, period: PERIOD, units: 3, limit: 100 });
    const outcomes = await Promise.all(Array.from({ length: 100 }, (_, i) => charge(i % 2 ? a : b)));
    expect(outcomes.filter((outcome) => outcome.ok)).toHaveLength(33);
    expect(await a.unitsUsed(keyId, PERIOD)).toBe(99);
    expect(await b.unitsUsed(keyId, PERIOD)).toBe(99);
    await a.close();
    await b.close();
  });

  test("one group with several keys and months: each charge is decided in order against its own key and month", async () => {
    const path = freshPath();
    const store = SqliteStore.open(path);
    const a = (await store.createKey("a", "free")).key.id;
    const b = (await store.createKey("b", "free")).key.id;
    await store.charge({ keyId: a, period: "2026-11", units: 3, limit: 10 });
    // Queued in one turn, so committed as one group.
    const outcomes = await Promise.all([
      store.charge({ keyId: a, period: "2026-11", units: 6, limit: 10 }),
      store.charge({ keyId: b, period: "2026-11", units: 6, limit: 10 }),
      store.charge({ keyId: a, period: "2026-11", units: 2, limit: 10 }),
      store.charge({ keyId: a, period: "2026-12", units: 2, limit: 10 }),
      store.charge({ keyId: a, period: "2026-11", units: 1, limit: 10 }),
      store.charge({ keyId: a, period: "2026-11", units: 0, limit: 10 }),
      store.charge({ keyId: b, period: "2026-11", units: 4, limit: 10 }),
      store.charge({ keyId: b, period: "2026-11", units: 1, limit: 10 }),
    ]);
    expect(outcomes).toEqual([
      { ok: true, used: 9 },
      { ok: true, used: 6 },
      { ok: false, used: 9 },
      { ok: true, used: 2 },
      { ok: true, used: 10 },
      { ok: true, used: 10 },
      { ok: true, used: 10 },
      { ok: false, used: 10 },
    ]);
    await store.close();
    const reopened = SqliteStore.open(path);
    expect(await reopened.unitsUsed(a, "2026-11")).toBe(10);
    expect(await reopened.unitsUsed(a, "2026-12")).toBe(2);
    expect(await reopened.unitsUsed(b, "2026-11")).toBe(10);
    await reopened.close();
  });
});

describe("failed commits", () => {
  test("a group whose transaction fails rejects every charge in it and applies none", async () => {
    const { store, keyId } = await storeWithKey();
    const good = store.charge({ keyId, period: PERIOD, units: 1, limit: null });
    // A usage row for a key that does not exist breaks a foreign key: the commit fails.
    const bad = store.charge({ keyId: "key_unknown", period: PERIOD, units: 1, limit: null });
    const settled = await Promise.allSettled([good, bad]);
    expect(settled.map((outcome) => outcome.status)).toEqual(["rejected", "rejected"]);
    expect(await store.unitsUsed(keyId, PERIOD)).toBe(0);
    expect(await store.charge({ keyId, period: PERIOD, units: 1, limit: null })).toEqual({ ok: true, used: 1 });
    await store.close();
  });

  test("a write lock held past the busy timeout rejects the group with SQLITE_BUSY; later charges go through", async () => {
    const path = freshPath();
    const { store: setup, keyId } = await storeWithKey(path);
    await setup.close();
    const store = SqliteStore.open(path, { busyTimeoutMs: 50 });
    const holder = new Database(path);
    holder.run("BEGIN IMMEDIATE");
    const started = performance.now();
    const settled = await Promise.allSettled([1, 2, 3].map((units) => store.charge({ keyId, period: PERIOD, units, limit: null })));
    expect(performance.now() - started).toBeGreaterThanOrEqual(45);
    for (const outcome of settled) {
      expect(outcome.status).toBe("rejected");
      expect((outcome as PromiseRejectedResult).reason).toMatchObject({ code: "SQLITE_BUSY" });
    }
    holder.run("COMMIT");
    holder.close();
    expect(await store.charge({ keyId, period: PERIOD, units: 4, limit: null })).toEqual({ ok: true, used: 4 });
    await store.close();
  });
});

describe("closing", () => {
  test("close commits the charges still queued", async () => {
    const path = freshPath();
    const { store, keyId, charge } = await storeWithKey(path);
    const queued = [charge(2, null), charge(3, null)];
    await store.close();
    expect(await Promise.all(queued)).toEqual([
      { ok: true, used: 2 },
      { ok: true, used: 5 },
    ]);
    const reopened = SqliteStore.open(path);
    expect(await reopened.unitsUsed(keyId, PERIOD)).toBe(5);
    await reopened.close();
  });

  test("a closed store refuses charges; closing twice is harmless", async () => {
    const { store, charge } = await storeWithKey();
    await store.close();
    await store.close();
    await expect(charge(1, null)).rejects.toThrow(new StoreError("the store is closed"));
  });
});

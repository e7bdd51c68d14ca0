import { expect, test } from "bun:test";
import { Meter } from "../../src/access/meter.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import type { ActiveKey } from "../../src/store/store.ts";

test("each charge goes to the month of the clock at that moment, also when the clock moves back", async () => {
  const store = SqliteStore.open(":memory:");
  const { key } = await store.createKey("k", "free");
  let now = new Date("2026-11-30T23:59:59.999Z");
  const meter = new Meter(store, () => now);
  const active = { key, plan: { name: "limited", maxBatchSize: 100, monthlyUnits: 10, rateLimit: null } } as unknown as ActiveKey;

  expect(await meter.charge(active, 4)).toEqual({ consumed: 4, remaining: 6 });
  now = new Date("2026-12-01T00:00:00.000Z");
  expect(await meter.charge(active, 3)).toEqual({ consumed: 3, remaining: 7 });
  now = new Date("2026-11-15T00:00:00.000Z");
  expect(await meter.charge(active, 6)).toEqual({ consumed: 6, remaining: 0 });
  await expect(meter.charge(active, 1)).rejects.toMatchObject({ code: "quota_exceeded", extra: { period_end: "2026-12-01T00:00:00Z" } });
  await expect(meter.charge(active, 1)).rejects.toThrow("this request needs 1 unit; the key has 0 left until 2026-12-01T00:00:00Z");
  await expect(meter.charge(active, 2)).rejects.toThrow("this request needs 2 units;");
  expect(await store.unitsUsed(key.id, "2026-11")).toBe(10);
  expect(await store.unitsUsed(key.id, "2026-12")).toBe(3);
  await store.close();
});

/**
 * CONTRACT §12: the wall clock steps (NTP, a VM resumed). Rate limits run on a monotonic
 * clock, so a step neither locks keys out nor hands out a burst; billing periods follow
 * the wall clock.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KeyCache } from "../../src/access/key-cache.ts";
import { createApp } from "../../src/http/app.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { defaultIndex } from "../support/default-data.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-clock-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("a wall clock stepped back an hour, or forward, changes no rate limit; the month follows the wall clock", async () => {
  const store = SqliteStore.open(join(dir, "state.db"));
  await store.setPlan("slow", { maxBatchSize: 10, monthlyUnits: 1000, rateLimit: 2 });
  const { key, secret } = await store.createKey("clock", "slow");
  const keys = await KeyCache.load(store);
  let wall = Date.parse("2026-11-30T23:59:59.500Z");
  let monotonic = 1_000_000;
  const index = defaultIndex();
  const app = createApp({ store, keys, index: () => index, clock: { now: () => new Date(wall), monotonicMs: () => monotonic } });
  const lookup = () =>
    app.handle(
      new Request("http://iplookup.test/v1/lookup", {
        method: "POST",
        headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
        body: '{"ip":"1.1.1.1"}',
      }),
    );
  expect((await lookup()).status).toBe(200);
  expect((await lookup()).status).toBe(200);
  expect((await lookup()).status).toBe(429);

  // The wall clock jumps back an hour; half a second passes on the monotonic clock.
  wall -= 3_600_000;
  monotonic += 500;
  const afterBackStep = await lookup();
  expect(afterBackStep.status).toBe(200);
  expect(afterBackStep.headers.get("retry-after")).toBeNull();

  // A jump forward by a day hands out no new burst: the bucket still holds what it held.
  wall += 86_400_000 + 3_600_000;
  expect((await lookup()).status).toBe(429);
  monotonic += 1000;
  expect((await lookup()).status).toBe(200);

  // Units follow the wall clock: the last one went to December, the first three to November.
  expect(await store.unitsUsed(key.id, "2026-11")).toBe(3);
  expect(await store.unitsUsed(key.id, "2026-12")).toBe(1);
  await store.close();
});

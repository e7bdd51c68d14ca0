/**
 * The app over a store that several servers share: a key's rate through leased tokens
 * (LeaseLimiter) in the contract's order of checks, and the store's health in /readyz
 * and /v1. The leases here come from a bucket in memory that the test controls.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KeyCache } from "../../src/access/key-cache.ts";
import { LeaseLimiter } from "../../src/access/lease-limiter.ts";
import { StoreHealth } from "../../src/access/store-health.ts";
import { createApp, type App } from "../../src/http/app.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { StoreUnavailableError, type TokenLease } from "../../src/store/store.ts";
import { defaultIndex } from "../support/default-data.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-leases-"));
let store: SqliteStore;
let app: App;
let secret: string;
const health = new StoreHealth();
/** What the next leases get: tokens left in the shared bucket, or an error. */
const bucket: { tokens: number; error?: Error; asked: number[] } = { tokens: 0, asked: [] };

beforeAll(async () => {
  store = SqliteStore.open(join(dir, "state.db"));
  await store.setPlan("three", { maxBatchSize: 10, monthlyUnits: null, rateLimit: 3 });
  ({ secret } = await store.createKey("k", "three"));
  const keys = await KeyCache.load(store);
  const lease = async (_keyId: string, _rate: number, wanted: number): Promise<TokenLease> => {
    bucket.asked.push(wanted);
    if (bucket.error) throw bucket.error;
    const granted = Math.min(wanted, Math.floor(bucket.tokens));
    bucket.tokens -= granted;
    return { granted, available: bucket.tokens };
  };
  const index = defaultIndex();
  app = createApp({ store, keys, index: () => index, clock: { now: () => new Date() }, leases: new LeaseLimiter(lease, health), storeHealth: health });
});

afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function lookup(contentType = "application/json"): Promise<Response> {
  return app.handle(
    new Request("http://iplookup.test/v1/lookup", { method: "POST", headers: { authorization: `Bearer ${secret}`, "content-type": contentType }, body: JSON.stringify({ ip: "1.1.1.1" }) }),
  );
}

describe("rate limits through leased tokens", () => {
  test("requests without a token wait for one lease together, and each is answered and charged once", async () => {
    bucket.tokens = 3;
    bucket.asked = [];
    const responses = await Promise.all([lookup(), lookup()]);
    expect(responses.map((response) => response.status)).toEqual([200, 200]);
    expect(bucket.asked).toEqual([2]);
    // One unit each: waiting for the lease charged no request twice.
    expect(responses.map((response) => response.headers.get("x-units-consumed"))).toEqual(["1", "1"]);
  });

  test("the rate comes before the media type: a dry bucket is 429 with Retry-After, whatever the body", async () => {
    bucket.tokens = 0;
    await Bun.sleep(1100); // this server's own bucket (3 a second) and the last lease's time are past
    const refused = await lookup("text/plain");
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(((await refused.json()) as { code: string }).code).toBe("rate_limited");
    await Bun.sleep(1100);
    bucket.tokens = 1;
    const next = await lookup("text/plain");
    expect(next.status).toBe(415);
  });

  test("a store away: 503 store_unavailable for the request waiting, then at once for every /v1 request, /readyz 503, /healthz 200; back when the poll says so", async () => {
    await Bun.sleep(1100);
    bucket.error = new StoreUnavailableError("away");
    const failed = await lookup();
    expect(failed.status).toBe(503);
    expect(failed.headers.get("retry-after")).toBe("2");
    expect(((await failed.json()) as { code: string }).code).toBe("store_unavailable");
    expect(health.reachable).toBe(false);
    const asked = bucket.asked.length;
    const usage = await app.handle(new Request("http://iplookup.test/v1/usage", { headers: { authorization: `Bearer ${secret}` } }));
    expect(usage.status).toBe(503);
    expect(bucket.asked).toHaveLength(asked);
    const ready = await app.handle(new Request("http://iplookup.test/readyz"));
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ status: "unavailable", reason: "the state store cannot be reached" });
    expect((await app.handle(new Request("http://iplookup.test/healthz"))).status).toBe(200);
    // No key: still 401, which needs no store.
    expect((await app.handle(new Request("http://iplookup.test/v1/usage"))).status).toBe(401);
    bucket.error = undefined;
    bucket.tokens = 3;
    health.markReachable();
    expect((await lookup()).status).toBe(200);
    expect((await app.handle(new Request("http://iplookup.test/readyz"))).status).toBe(200);
  });
});

describe("key controls with leased rates", () => {
  test("a key's own refusal comes before its lease and asks for none; a lease's refusal still tells the browser it may read it", async () => {
    const { secret: web } = await store.createKey("web", "three", { expiresAt: null, allowedCidrs: null, allowedOrigins: ["https://app.example.com"], metadata: null });
    const send = (origin: string) =>
      app.handle(
        new Request("http://iplookup.test/v1/lookup", {
          method: "POST",
          headers: { authorization: `Bearer ${web}`, "content-type": "application/json", origin },
          body: JSON.stringify({ ip: "1.1.1.1" }),
        }),
      );
    await Bun.sleep(1100);
    bucket.error = undefined;
    bucket.tokens = 0;
    const asked = bucket.asked.length;
    const refused = await send("https://evil.example");
    expect([refused.status, ((await refused.json()) as { code: string }).code]).toEqual([403, "origin_not_allowed"]);
    expect(bucket.asked).toHaveLength(asked);
    const limited = await send("https://app.example.com");
    expect([limited.status, ((await limited.json()) as { code: string }).code]).toEqual([429, "rate_limited"]);
    expect(bucket.asked.length).toBeGreaterThan(asked);
    expect(limited.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
    expect(limited.headers.get("vary")).toBe("Origin");
  });
});

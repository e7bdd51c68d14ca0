/**
 * PostgresStore.leaseTokens: one token bucket a key in the database, shared by every
 * server, from which they lease slices of the key's rate (see LeaseLimiter).
 */
import { describe, expect, test } from "bun:test";
import { PostgresStore } from "../../src/store/postgres-store.ts";
import { StoreUnavailableError, type TokenLease } from "../../src/store/store.ts";
import { postgresAvailable, testStates } from "../support/postgres.ts";
import { startTcpProxy } from "../support/tcp-proxy.ts";

const states = testStates();

describe.skipIf(!postgresAvailable)("PostgresStore.leaseTokens", () => {
  test("a new bucket holds one second's worth; leases take whole tokens until it is dry, then it refills at the rate", async () => {
    const store = await PostgresStore.open(await states.fresh());
    // The three leases must fall within a tenth of a second (a token's refill at 10 a
    // second): a machine that stalls this test longer than that (a loaded CI runner)
    // has it start again on a new key, a few times at most.
    let key = "";
    let leases: TokenLease[] = [];
    let dryFrom = 0;
    for (let attempt = 0; attempt < 5; attempt++) {
      key = `key_a${attempt}`;
      const started = performance.now();
      leases = [await store.leaseTokens(key, 10, 4), await store.leaseTokens(key, 10, 4)];
      dryFrom = performance.now();
      leases.push(await store.leaseTokens(key, 10, 4));
      if (performance.now() - started < 80) break;
    }
    const [first, second, third] = leases as [TokenLease, TokenLease, TokenLease];
    expect(first).toMatchObject({ granted: 4 });
    expect(second).toMatchObject({ granted: 4 });
    // Two whole tokens left (and what refilled in the meantime, a fraction).
    expect(third.granted).toBe(2);
    expect(third.available).toBeLessThan(1);
    expect((await store.leaseTokens(key, 10, 4)).granted).toBe(0);
    // Another key has a bucket of its own.
    expect((await store.leaseTokens("key_b", 10, 10)).granted).toBe(10);
    await Bun.sleep(320);
    const refilled = await store.leaseTokens(key, 10, 10);
    // What refilled since the bucket was left with less than a token: at most 10 a
    // second of the time measured around it (a loaded machine stretches that time).
    const drySeconds = (performance.now() - dryFrom) / 1000;
    expect(refilled.granted).toBeGreaterThanOrEqual(3);
    expect(refilled.granted).toBeLessThanOrEqual(Math.floor(1 + 10 * drySeconds));
    // Never more than a burst, however long it waited.
    expect((await store.leaseTokens("key_c", 20, 1)).granted).toBe(1);
    await Bun.sleep(200);
    expect((await store.leaseTokens("key_c", 20, 100)).granted).toBe(20);
    // A lower rate (a plan changed) caps what was saved at its burst.
    expect((await store.leaseTokens("key_d", 20, 1)).granted).toBe(1);
    expect((await store.leaseTokens("key_d", 3, 10)).granted).toBe(3);
    await store.close();
  });

  test("leases from two stores (two servers) never take more than the burst and the refill", async () => {
    const url = await states.fresh();
    const stores = [await PostgresStore.open(url), await PostgresStore.open(url)];
    const rate = 50;
    let granted = 0;
    const started = performance.now();
    const until = started + 1000;
    await Promise.all(
      Array.from({ length: 8 }, async (_, i) => {
        while (performance.now() < until) {
          const lease = await stores[i % 2]!.leaseTokens("key_race", rate, 1 + (i % 3));
          granted += lease.granted;
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    expect(granted).toBeLessThanOrEqual(rate + Math.ceil(rate * seconds));
    // Dry most of the time, but every token that refilled was taken.
    expect(granted).toBeGreaterThanOrEqual(rate + Math.floor(rate * 0.8));
    await Promise.all(stores.map((store) => store.close()));
  });

  test("a database that cannot be reached: StoreUnavailableError, in bounded time", async () => {
    const url = new URL(await states.fresh());
    const proxy = await startTcpProxy({ hostname: url.hostname, port: Number(url.port || 5432) });
    url.port = String(proxy.port);
    const store = await PostgresStore.open(url.href, { readTimeoutMs: 300, connectTimeoutSeconds: 1 });
    expect((await store.leaseTokens("key_a", 5, 1)).granted).toBe(1);
    for (const act of [() => proxy.cut(), () => proxy.stall()]) {
      act();
      const started = performance.now();
      expect(await store.leaseTokens("key_a", 5, 1).catch((error: unknown) => error)).toBeInstanceOf(StoreUnavailableError);
      expect(performance.now() - started).toBeLessThan(1000);
      proxy.restore();
    }
    let back: number | undefined;
    for (let attempt = 0; attempt < 20 && back === undefined; attempt++) {
      back = await store.leaseTokens("key_a", 5, 1).then(
        (lease) => lease.granted,
        () => Bun.sleep(100).then(() => undefined),
      );
    }
    expect(back).toBe(1);
    await store.close();
    proxy.close();
  });
});

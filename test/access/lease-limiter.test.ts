import { describe, expect, test } from "bun:test";
import { LEASE_LIFETIME_MS, LEASE_WAIT_MS, LeaseLimiter } from "../../src/access/lease-limiter.ts";
import { StoreHealth } from "../../src/access/store-health.ts";
import { StoreUnavailableError, type TokenLease } from "../../src/store/store.ts";

/** The store's bucket (as PostgresStore.leaseTokens keeps it), on a clock the test moves. */
class FakeBucket {
  leases: { keyId: string; wanted: number }[] = [];
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  constructor(private readonly now: () => number) {}

  take(keyId: string, rate: number, wanted: number): TokenLease {
    this.leases.push({ keyId, wanted });
    const at = this.now();
    const bucket = this.buckets.get(keyId) ?? { tokens: rate, at };
    const available = Math.min(rate, bucket.tokens + (Math.max(0, at - bucket.at) / 1000) * rate);
    const granted = Math.min(wanted, Math.floor(available));
    this.buckets.set(keyId, { tokens: available - granted, at });
    return { granted, available: available - granted };
  }
}

/** Lets setImmediate callbacks and promise reactions run. */
const settle = async () => {
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
};

function setup() {
  const clock = { now: 1_000_000 };
  const bucket = new FakeBucket(() => clock.now);
  const health = new StoreHealth();
  const limiter = new LeaseLimiter(async (keyId, rate, wanted) => bucket.take(keyId, rate, wanted), health, () => clock.now);
  return { clock, bucket, health, limiter };
}

describe("LeaseLimiter", () => {
  test("a request without a token waits for a lease; requests of the same turn share one; tokens in hand go on at once", async () => {
    const { bucket, limiter } = setup();
    const first = [limiter.take("k", 10), limiter.take("k", 10), limiter.take("k", 10)];
    for (const taken of first) expect(taken).toBeInstanceOf(Promise);
    expect(await Promise.all(first)).toEqual([0, 0, 0]);
    expect(bucket.leases).toEqual([{ keyId: "k", wanted: 3 }]);
    // That slice was used up before it expired: the next one carries a token more than the request waiting.
    expect(await limiter.take("k", 10)).toBe(0);
    expect(bucket.leases.at(-1)).toEqual({ keyId: "k", wanted: 2 });
    expect(limiter.take("k", 10)).toBe(0);
    // Unlimited keys never lease.
    expect(limiter.take("u", null)).toBe(0);
    expect(bucket.leases).toHaveLength(2);
  });

  test("a dry bucket refuses the requests waiting with the time to the next token, and the key stops asking until then", async () => {
    const { clock, bucket, limiter } = setup();
    const waiting = Array.from({ length: 5 }, () => limiter.take("k", 2));
    // Two tokens (the burst); the others learn when to come back.
    expect(await Promise.all(waiting)).toEqual([0, 0, 1, 1, 1]);
    const asked = bucket.leases.length;
    expect(limiter.take("k", 2)).toBe(1);
    expect(bucket.leases).toHaveLength(asked);
    clock.now += 500; // a token has refilled
    expect(await limiter.take("k", 2)).toBe(0);
    expect(bucket.leases).toHaveLength(asked + 1);
    // More waiting at once than the bucket could ever hold: refused without waiting.
    clock.now += 1000;
    const many = Array.from({ length: 4 }, () => limiter.take("k", 2));
    expect(many.slice(2)).toEqual([1, 1]);
    expect(await Promise.all(many.slice(0, 2))).toEqual([0, 0]);
  });

  test("leased tokens are never spent past their lifetime, counted from when the lease was asked for", async () => {
    const { clock, bucket, limiter } = setup();
    expect(await limiter.take("k", 10)).toBe(0);
    // Spent early: the next lease brings a spare token along.
    expect(await limiter.take("k", 10)).toBe(0);
    expect(bucket.leases.at(-1)!.wanted).toBe(2);
    clock.now += LEASE_LIFETIME_MS;
    const after = limiter.take("k", 10);
    expect(after).toBeInstanceOf(Promise);
    expect(await after).toBe(0);
    // The spare one expired unspent: the next slice is smaller again.
    expect(bucket.leases.at(-1)!.wanted).toBe(1);
  });

  test("a lease that answers after the tokens' lifetime is not spent: the request asks again", async () => {
    const clock = { now: 0 };
    const bucket = new FakeBucket(() => clock.now);
    let calls = 0;
    const limiter = new LeaseLimiter(
      async (keyId, rate, wanted) => {
        if (++calls === 1) clock.now += LEASE_LIFETIME_MS + 1; // a slow database
        return bucket.take(keyId, rate, wanted);
      },
      new StoreHealth(),
      () => clock.now,
    );
    expect(await limiter.take("k", 10)).toBe(0);
    expect(calls).toBe(2);
  });

  test("a store that cannot be reached: 503 for the requests waiting, then for every request until the store is back", async () => {
    let fail = true;
    const clock = { now: 0 };
    const bucket = new FakeBucket(() => clock.now);
    const changes: boolean[] = [];
    const health = new StoreHealth((reachable) => changes.push(reachable));
    const limiter = new LeaseLimiter(
      async (keyId, rate, wanted) => {
        if (fail) throw new StoreUnavailableError("the database is away");
        return bucket.take(keyId, rate, wanted);
      },
      health,
      () => clock.now,
    );
    const waiting = [limiter.take("k", 10), limiter.take("k", 10)];
    for (const outcome of await Promise.allSettled(waiting)) expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(StoreUnavailableError);
    expect(health.reachable).toBe(false);
    // At once now, for limited and unlimited keys alike: nothing queues for a store that is away.
    expect(() => limiter.take("k", 10)).toThrow(StoreUnavailableError);
    expect(() => limiter.take("u", null)).toThrow(StoreUnavailableError);
    fail = false;
    health.markReachable(); // the key poll found it back
    expect(await limiter.take("k", 10)).toBe(0);
    expect(changes).toEqual([false, true]);
    expect(limiter.waitingCount).toBe(0);
  });

  test(`a lease that never answers: 503 after ${LEASE_WAIT_MS} ms, and nothing left waiting`, async () => {
    const limiter = new LeaseLimiter(() => new Promise<TokenLease>(() => {}), new StoreHealth());
    const started = performance.now();
    const outcome = await Promise.resolve(limiter.take("k", 10)).catch((error: unknown) => error);
    expect(outcome).toBeInstanceOf(StoreUnavailableError);
    expect(performance.now() - started).toBeGreaterThanOrEqual(LEASE_WAIT_MS - 5);
    expect(limiter.waitingCount).toBe(0);
  });

  test("the bound: threads of several servers, each with its own demand, never spend more than 6.4 × the rate over any 5 seconds", async () => {
    const clock = { now: 0 };
    const bucket = new FakeBucket(() => clock.now);
    const rate = 20;
    // Three servers of two threads; each thread's demand changes over time, some far over the rate.
    const threads = Array.from({ length: 6 }, () => new LeaseLimiter(async (keyId, r, wanted) => bucket.take(keyId, r, wanted), new StoreHealth(), () => clock.now));
    const admitted: number[] = [];
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
    for (let step = 0; step < 4000; step++) {
      clock.now += 5; // 20 s in all
      const pending: Promise<void>[] = [];
      for (const [i, thread] of threads.entries()) {
        const busy = Math.floor(step / 500 + i) % 3; // quiet, steady, flooding
        const requests = busy === 0 ? (random() < 0.02 ? 1 : 0) : busy === 1 ? (random() < 0.1 ? 1 : 0) : Math.floor(random() * 4);
        for (let r = 0; r < requests; r++) {
          const taken = thread.take("k", rate);
          if (taken === 0) admitted.push(clock.now);
          else if (taken instanceof Promise) pending.push(taken.then((wait) => void (wait === 0 && admitted.push(clock.now))));
        }
      }
      await Promise.all(pending);
      await settle();
    }
    let worst = 0;
    for (let start = 0, end = 0; end < admitted.length; end++) {
      while (admitted[end]! - admitted[start]! > 5000) start++;
      worst = Math.max(worst, end - start + 1);
    }
    console.log(`most spent in a 5 s window: ${worst} at ${rate}/s (${(worst / rate).toFixed(2)} × the rate)`);
    expect(worst).toBeLessThanOrEqual(rate * (6 + LEASE_LIFETIME_MS / 1000));
    // Not starved either: most of what the bucket gave was spent.
    expect(worst).toBeGreaterThanOrEqual(rate * 5 * 0.8);
  });
});

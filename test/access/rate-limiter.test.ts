import { expect, test } from "bun:test";
import { RateLimiter } from "../../src/access/rate-limiter.ts";

test("a key gets one second's worth as a burst, then refills at its rate", () => {
  let now = 1_000_000;
  const limiter = new RateLimiter(() => now);
  for (let i = 0; i < 10; i++) expect(limiter.take("k", 10)).toBe(0);
  expect(limiter.take("k", 10)).toBe(1);
  now += 100; // one token back
  expect(limiter.take("k", 10)).toBe(0);
  expect(limiter.take("k", 10)).toBeGreaterThan(0);
  now += 10_000; // the bucket never holds more than the burst
  for (let i = 0; i < 10; i++) expect(limiter.take("k", 10)).toBe(0);
  expect(limiter.take("k", 10)).toBeGreaterThan(0);
});

test("keys have their own buckets; unlimited never waits", () => {
  const limiter = new RateLimiter(() => 0);
  expect(limiter.take("a", 1)).toBe(0);
  expect(limiter.take("a", 1)).toBe(1);
  expect(limiter.take("b", 1)).toBe(0);
  for (let i = 0; i < 1000; i++) expect(limiter.take("c", null)).toBe(0);
});

test("Retry-After covers the wait for a slow rate", () => {
  const limiter = new RateLimiter(() => 0);
  expect(limiter.take("k", 1)).toBe(0);
  expect(limiter.take("k", 1)).toBe(1);
});

test("memory stays bounded when clients choose the ids", () => {
  let now = 0;
  const limiter = new RateLimiter(() => now, 1000);
  for (let i = 0; i < 10_000; i++) {
    limiter.take(`peer-${i}`, 10);
    if (i % 100 === 0) now += 10;
  }
  expect((limiter as unknown as { buckets: Map<string, unknown> }).buckets.size).toBeLessThanOrEqual(1000);
  // A recent client keeps its bucket through pruning.
  for (let i = 0; i < 10; i++) limiter.take("busy", 10);
  expect(limiter.take("busy", 10)).toBeGreaterThan(0);
});

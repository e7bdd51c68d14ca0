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

test("memory stays fixed when clients choose the ids, and a busy client keeps its bucket", () => {
  let now = 0;
  const limiter = new RateLimiter(() => now, 1000);
  const bytes = limiter.table.byteLength;
  for (let i = 0; i < 10; i++) limiter.take("busy", 10);
  for (let i = 0; i < 100_000; i++) {
    limiter.take(`peer-${i}`, 10);
    if (i % 100 === 0) now += 10;
    if (i % 1000 === 0) limiter.take("busy", 10);
  }
  expect(limiter.table.byteLength).toBe(bytes);
  expect(bytes).toBeLessThanOrEqual(1024 * 32);
  for (let i = 0; i < 10; i++) limiter.take("busy", 10);
  expect(limiter.take("busy", 10)).toBeGreaterThan(0);
});

test("two limiters on one table spend from the same buckets", () => {
  let now = 5_000;
  const one = new RateLimiter(() => now);
  const other = new RateLimiter(() => now, one.table);
  for (let i = 0; i < 5; i++) expect(one.take("k", 10)).toBe(0);
  for (let i = 0; i < 5; i++) expect(other.take("k", 10)).toBe(0);
  expect(one.take("k", 10)).toBe(1);
  expect(other.take("k", 10)).toBe(1);
  now += 1000;
  expect(other.take("k", 10)).toBe(0);
});

test("a clock read a little behind another thread's never adds tokens nor takes them away", () => {
  let now = 10_000;
  const limiter = new RateLimiter(() => now);
  for (let i = 0; i < 3; i++) expect(limiter.take("k", 3)).toBe(0);
  now -= 5;
  expect(limiter.take("k", 3)).toBe(1);
  now += 5 + 334;
  expect(limiter.take("k", 3)).toBe(0);
});

test("threads sharing a table grant no more than the burst between them", async () => {
  const limiter = new RateLimiter(() => 0);
  const source = `
    import { RateLimiter } from ${JSON.stringify(new URL("../../src/access/rate-limiter.ts", import.meta.url).href)};
    self.onmessage = (event) => {
      const limiter = new RateLimiter(() => 0, event.data);
      let granted = 0;
      for (let i = 0; i < 20_000; i++) if (limiter.take("shared-key", 1000) === 0) granted++;
      postMessage(granted);
    };`;
  const url = URL.createObjectURL(new Blob([source], { type: "application/typescript" }));
  const workers = [0, 1, 2].map(() => new Worker(url));
  const granted = await Promise.all(
    workers.map((worker) => new Promise<number>((resolve) => {
      worker.onmessage = (event) => resolve(event.data as number);
      worker.postMessage(limiter.table);
    })),
  );
  for (const worker of workers) worker.terminate();
  // The clock stands still: exactly the burst of 1000 is granted, however the threads interleave.
  expect(granted.reduce((a, b) => a + b, 0)).toBe(1000);
});


import { expect, test } from "bun:test";
import { monotonicMs } from "../../src/access/monotonic-clock.ts";

test("two threads read one clock: a reading taken after another in a second thread is not earlier", async () => {
  const shared = new SharedArrayBuffer(16);
  const worker = new Worker(new URL("./monotonic-clock-worker.ts", import.meta.url).href);
  try {
    const messages: string[] = [];
    const next = () => new Promise<string>((resolve) => (worker.onmessage = (event) => resolve(event.data as string)));
    const ready = next();
    worker.postMessage(shared);
    messages.push(await ready);
    const done = next();
    const mine = monotonicMs();
    Atomics.store(new Int32Array(shared, 8, 1), 0, 1);
    Atomics.notify(new Int32Array(shared, 8, 1), 0);
    messages.push(await done);
    const theirs = new Float64Array(shared, 0, 1)[0]!;
    // Per-thread origins (performance.now, process.hrtime, Bun.nanoseconds) put the
    // worker's reading milliseconds before the main thread's.
    expect(theirs).toBeGreaterThanOrEqual(mine);
    expect(theirs - mine).toBeLessThan(1000);
  } finally {
    worker.terminate();
  }
});

test("the clock is not the wall clock: a step of the wall clock at a thread's start cannot move it", () => {
  // CLOCK_MONOTONIC counts from the machine's boot, not from 1970.
  expect(Math.abs(monotonicMs() - Date.now())).toBeGreaterThan(365 * 86_400_000);
  const first = monotonicMs();
  expect(monotonicMs()).toBeGreaterThanOrEqual(first);
});

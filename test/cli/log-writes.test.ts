import { expect, test } from "bun:test";
import { logWrites } from "../../src/cli/log-writes.ts";

/** An output whose reader takes each write when the test says so. */
function heldOutput() {
  const waiting: Array<(failed?: boolean) => void> = [];
  return { waiting, output: (_text: string, taken: (failed?: boolean) => void) => void waiting.push(taken) };
}

test("with nothing written, the writes are settled at once", async () => {
  const { output } = heldOutput();
  expect(await logWrites(output).settled(50, 1000)).toBe(true);
});

test("writes the reader takes while the process waits are settled, each one's callback called", async () => {
  const { waiting, output } = heldOutput();
  const log = logWrites(output);
  const written: string[] = [];
  log.write("a", () => written.push("a"));
  log.write("b", () => written.push("b"));
  const settled = log.settled(200, 5000);
  waiting.shift()!();
  await Bun.sleep(100);
  waiting.shift()!();
  expect(await settled).toBe(true);
  expect(written).toEqual(["a", "b"]);
});

test("a reader that takes nothing for the idle time is left: not settled", async () => {
  const { output } = heldOutput();
  const log = logWrites(output);
  log.write("a", () => {});
  const started = performance.now();
  expect(await log.settled(100, 5000)).toBe(false);
  expect(performance.now() - started).toBeLessThan(2000);
});

test("a reader that keeps taking, slowly, is left once the longest wait has passed", async () => {
  const { waiting, output } = heldOutput();
  const log = logWrites(output);
  for (let i = 0; i < 100; i++) log.write(String(i), () => {});
  const taking = setInterval(() => waiting.shift()?.(), 20);
  try {
    expect(await log.settled(200, 300)).toBe(false);
    expect(waiting.length).toBeGreaterThan(0);
  } finally {
    clearInterval(taking);
  }
});

test("a write that fails is settled, and its callback told it failed", async () => {
  const { waiting, output } = heldOutput();
  const log = logWrites(output);
  const outcomes: Array<boolean | undefined> = [];
  log.write("a", (failed) => outcomes.push(failed));
  log.write("b", (failed) => outcomes.push(failed));
  const settled = log.settled(5000, 10_000);
  waiting.shift()!(true);
  waiting.shift()!();
  expect(await settled).toBe(true);
  expect(outcomes).toEqual([true, undefined]);
});

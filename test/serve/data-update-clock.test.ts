/**
 * CONTRACT §12: timeouts run on a monotonic clock. The waits between `serve
 * --update-every` rounds are kept whatever the wall clock does meanwhile.
 */
import { expect, test } from "bun:test";
import { createLogger } from "../../src/log/logger.ts";
import { Metrics } from "../../src/metrics/metrics.ts";
import { startDataUpdates } from "../../src/serve/data-updates.ts";

const HOUR = 3_600_000;

/**
 * Starts rounds every `every` ms (the first after `every`: the data is old), each one a
 * failing stand-in for iplookup; steps the wall clock by `stepMs` after `stepAfterMs`;
 * resolves with when the first round ended, in ms since the start, or null if none had
 * within `withinMs`, and with whether one had ended before `checkAtMs`.
 */
async function firstRound(every: number, stepAfterMs: number, stepMs: number, checkAtMs: number, withinMs: number) {
  const realNow = Date.now;
  const lines: string[] = [];
  const started = performance.now();
  const updates = startDataUpdates({
    every,
    dataPath: "/nonexistent-folder/data.db",
    command: ["false"],
    env: {},
    logger: createLogger("info", (line) => lines.push(line)),
    metrics: new Metrics(),
    dataBuiltAt: "2026-01-01T00:00:00Z",
    random: () => 0.5,
  });
  const ran = () => lines.some((line) => line.includes("data update failed"));
  let ranBeforeCheck = false;
  let endedAt: number | null = null;
  try {
    await Bun.sleep(stepAfterMs);
    Date.now = () => realNow.call(Date) + stepMs;
    await Bun.sleep(checkAtMs - stepAfterMs);
    ranBeforeCheck = ran();
    while (performance.now() - started < withinMs) {
      if (ran()) {
        endedAt = performance.now() - started;
        break;
      }
      await Bun.sleep(20);
    }
  } finally {
    Date.now = realNow;
    await updates.stop();
  }
  return { endedAt, ranBeforeCheck };
}

test("the wall clock stepped back an hour mid-wait: the round still comes at its time", async () => {
  const { endedAt } = await firstRound(1000, 300, -HOUR, 300, 10_000);
  expect(endedAt).not.toBeNull();
  expect(endedAt!).toBeGreaterThanOrEqual(900);
}, 20_000);

test("the wall clock stepped forward a day mid-wait: the round does not come early", async () => {
  const { endedAt, ranBeforeCheck } = await firstRound(2000, 200, 24 * HOUR, 1000, 10_000);
  expect(ranBeforeCheck).toBe(false);
  expect(endedAt).not.toBeNull();
  expect(endedAt!).toBeGreaterThanOrEqual(1900);
}, 20_000);

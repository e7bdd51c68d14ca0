import { expect, test } from "bun:test";
import { parseUpdateEvery } from "../../src/config/duration.ts";
import { createLogger } from "../../src/log/logger.ts";
import { Metrics } from "../../src/metrics/metrics.ts";
import { startDataUpdates } from "../../src/serve/data-updates.ts";

const HOUR = 3_600_000;
const now = new Date("2026-11-23T12:00:00Z");

/** The first wait the scheduler announces, with the jitter at `random`. */
async function firstCheckIn(every: number, dataBuiltAt: string, random = 0.5): Promise<number> {
  const lines: string[] = [];
  const updates = startDataUpdates({
    every,
    dataPath: "/nonexistent/data.db",
    command: ["false"],
    env: {},
    logger: createLogger("info", (line) => lines.push(line), () => now),
    metrics: new Metrics(),
    dataBuiltAt,
    now: () => now,
    random: () => random,
  });
  await updates.stop();
  return JSON.parse(lines[0] as string).first_check_in_seconds;
}

test("the first check comes when the data is an interval old, not sooner than a minute after start; ±10% at random", async () => {
  // Built an hour ago, every 24 h: in 23 h.
  expect(await firstCheckIn(24 * HOUR, new Date(now.getTime() - HOUR).toISOString())).toBe(23 * 3600);
  // Older than the interval: a minute after start (a server restarted daily still checks).
  expect(await firstCheckIn(24 * HOUR, "2026-01-01T00:00:00Z")).toBe(60);
  // An interval shorter than a minute: that interval.
  expect(await firstCheckIn(5000, "2026-01-01T00:00:00Z")).toBe(5);
  // The jitter's ends.
  expect(await firstCheckIn(24 * HOUR, "2026-01-01T00:00:00Z", 0)).toBe(54);
  expect(await firstCheckIn(24 * HOUR, "2026-01-01T00:00:00Z", 1)).toBe(66);
});

test("the outcomes in /metrics: the main thread's counts, whatever the threads", () => {
  const table = Metrics.table([], 2);
  const main = new Metrics(table, 0);
  const worker = new Metrics(table, 1);
  const render = () =>
    worker.render({ now, dataBuiltAt: now.toISOString(), dataVersion: "v", dataSourceVersions: "", dataSources: [], version: "0" });
  expect(render()).toContain("\niplookup_data_update_last_success_timestamp_seconds 0\n");
  main.setDataUpdateSuccess(1_795_000_000);
  main.addDataUpdateFailure();
  main.addDataUpdateFailure();
  main.setDataUpdateSuccess(1_795_000_060);
  expect(render()).toContain("# TYPE iplookup_data_update_last_success_timestamp_seconds gauge\niplookup_data_update_last_success_timestamp_seconds 1795000060\n");
  expect(render()).toContain("# TYPE iplookup_data_update_failures_total counter\niplookup_data_update_failures_total 2\n");
});

test("--update-every durations", () => {
  expect(parseUpdateEvery("24h", "--update-every")).toBe(24 * HOUR);
  expect(parseUpdateEvery("1h30m", "--update-every")).toBe(1.5 * HOUR);
  expect(parseUpdateEvery("1s", "--update-every")).toBe(1000);
  expect(parseUpdateEvery("off", "--update-every")).toBeNull();
  expect(() => parseUpdateEvery("0s", "--update-every")).toThrow('--update-every: "0s" is shorter than the shortest interval, 1s');
  expect(() => parseUpdateEvery("31d", "IPLOOKUP_UPDATE_EVERY")).toThrow('IPLOOKUP_UPDATE_EVERY: "31d" is longer than the longest interval, 30d');
  expect(() => parseUpdateEvery("daily", "--update-every")).toThrow("is not a duration");
});

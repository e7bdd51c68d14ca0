import { expect, test } from "bun:test";
import { createLogger } from "../../src/log/logger.ts";
import { Metrics } from "../../src/metrics/metrics.ts";
import { startDataUpdates } from "../../src/serve/data-updates.ts";

/** Runs rounds every second with `command` as iplookup, until a failure is logged; returns the log. */
async function firstFailure(command: string[], dataPath: string, extra: { downloadTimeout?: number; maxExpanded?: number } = {}) {
  const lines: string[] = [];
  const metrics = new Metrics();
  const updates = startDataUpdates({
    every: 1000,
    dataPath,
    command,
    env: {},
    logger: createLogger("info", (line) => lines.push(line)),
    metrics,
    dataBuiltAt: "2026-01-01T00:00:00Z",
    ...extra,
  });
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline && !lines.some((line) => line.includes("data update failed"))) await Bun.sleep(50);
  await updates.stop();
  return lines.map((line) => JSON.parse(line) as { msg: string; error?: string });
}

test("each round's child is given serve's --download-timeout and --max-expanded", async () => {
  // A stand-in for iplookup that fails with its arguments as its reason.
  const logged = await firstFailure(["sh", "-c", 'echo "$@" >&2; exit 1', "iplookup"], "/tmp/iplookup-rounds-data.db", { downloadTimeout: 120_000, maxExpanded: 2 ** 20 });
  const failure = logged.find((line) => line.msg.startsWith("data update failed"));
  expect(failure?.error).toBe("data update --data /tmp/iplookup-rounds-data.db --json --download-timeout 120s --max-expanded 1048576");
});

test("a round whose update lock cannot be looked at (no such folder) still runs, and its failure is logged, not thrown", async () => {
  const logged = await firstFailure(["false"], "/nonexistent-folder/data.db");
  expect(logged.some((line) => line.msg.startsWith("data update failed") && line.error === "exited with 1")).toBe(true);
});

test("a child a signal ended is logged as killed by that signal, not with its last line of progress", async () => {
  // A stand-in for iplookup killed mid-update (a kill -9, the out-of-memory killer).
  const logged = await firstFailure(["sh", "-c", 'echo "https://example.com/ip2asn.tsv.gz: not modified" >&2; kill -KILL $$', "iplookup"], "/tmp/iplookup-rounds-killed.db");
  const failure = logged.find((line) => line.msg.startsWith("data update failed")) as { error?: string; exit_code?: number } | undefined;
  expect(failure).toMatchObject({ error: "killed by SIGKILL", exit_code: 137 });
});

test("a child that exits with 128 + N after no error of its own (a wrapper passing a signal on) is logged as killed by that signal", async () => {
  const logged = await firstFailure(["sh", "-c", 'echo "downloading 12%" >&2; exit 137', "iplookup"], "/tmp/iplookup-rounds-wrapped.db");
  expect(logged.find((line) => line.msg.startsWith("data update failed"))).toMatchObject({ error: "killed by SIGKILL", exit_code: 137 });
});

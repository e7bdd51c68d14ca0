import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { download } from "../../../src/importer/fetch/download.ts";
import { startPublisher } from "../../support/publisher.ts";

/**
 * CONTRACT §13, downloads end: an answer within connectMs, no pause in the body longer
 * than idleMs, and the whole within timeoutMs (`--download-timeout`), however steadily
 * a trickling publisher keeps the connection alive. Each bound here is short; the
 * checks on elapsed time allow for a loaded machine many times over, and without the
 * deadline the trickle below would take 100 s.
 */
const dir = mkdtempSync(join(tmpdir(), "iplookup-download-clocks-"));
const publisher = startPublisher();
afterAll(() => {
  publisher.stop();
  rmSync(dir, { recursive: true, force: true });
});
let n = 0;
const folder = () => join(dir, String(++n));

test("a publisher that sends a byte every 100 ms is stopped at the total deadline, the idle timer never firing", async () => {
  publisher.publish("/trickle.csv", { body: "x".repeat(1000), trickleMs: 100 });
  const began = performance.now();
  const into = folder();
  await expect(download({ url: `${publisher.url}/trickle.csv` }, into, { timeoutMs: 1500, idleMs: 60_000 })).rejects.toThrow(
    /^the download was cut short after \d+ bytes \(it did not end within --download-timeout 1\.5 s\)$/,
  );
  expect(performance.now() - began).toBeLessThan(30_000);
  // The part written is not kept.
  expect(readdirSync(into).length).toBeLessThanOrEqual(1);
});

test("a body that pauses longer than the idle timeout is stopped, within the deadline", async () => {
  publisher.publish("/paused.csv", { body: "xy", trickleMs: 1500 });
  await expect(download({ url: `${publisher.url}/paused.csv` }, folder(), { idleMs: 300, timeoutMs: 60_000 })).rejects.toThrow("(no data for 0.3 s)");
});

test("a server that accepts and never answers is stopped by the answer timeout, then by the deadline", async () => {
  const silent = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  try {
    await expect(download({ url: `http://127.0.0.1:${silent.port}/x` }, folder(), { connectMs: 300 })).rejects.toThrow("no answer within 0.3 s");
    await expect(download({ url: `http://127.0.0.1:${silent.port}/x` }, folder(), { connectMs: 60_000, timeoutMs: 1000 })).rejects.toThrow("it did not end within --download-timeout 1 s");
  } finally {
    silent.stop(true);
  }
});

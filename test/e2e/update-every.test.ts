import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { geoLite2AsnMmdb, gzip, iptoasnTsv, maxmindTarGz } from "../support/download-fixtures.ts";
import { cliAsync as cli, startPublisher } from "../support/publisher.ts";
import { startServerProcess, type ServerProcess } from "../support/server-process.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-update-every-"));
const publisher = startPublisher();
const servers: ServerProcess[] = [];
afterAll(async () => {
  for (const server of servers) await server.stop("SIGKILL");
  publisher.stop();
  rmSync(dir, { recursive: true, force: true });
});

const LICENCE_KEY = "s3cretLicenceKey";
const AUTH = { IPLOOKUP_DOWNLOAD_AUTH: `123456:${LICENCE_KEY}` };

/** A key on a plan without limits, so that a stream of requests is never 429. */
async function unlimitedKey(state: string): Promise<string> {
  expect((await cli(["plans", "set", "load", "--max-batch", "100", "--monthly-units", "unlimited", "--rate-limit", "unlimited", "--state", state])).code).toBe(0);
  return JSON.parse((await cli(["keys", "create", "--name", "load", "--plan", "load", "--json", "--state", state])).stdout).key;
}

/** Polls `check` every 100 ms until it holds or `ms` pass; returns whether it held. */
async function eventually(check: () => Promise<boolean> | boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await Bun.sleep(100);
  }
  return false;
}

describe("a running server and data updates", () => {
  test("data update swaps the data of a server under load with no request failing", async () => {
    publisher.publish("/swap/ip2asn-combined.tsv.gz", { body: gzip(iptoasnTsv(13335)) });
    const path = join(dir, "swap.db");
    const state = join(dir, "swap-state.db");
    expect((await cli(["data", "import", "--data", path, `${publisher.url}/swap/ip2asn-combined.tsv.gz`])).code).toBe(0);
    const server = await startServerProcess(["--data", path, "--state", state, "--workers", "2", "--log-level", "warn"]);
    servers.push(server);
    const key = await unlimitedKey(state);
    const ask = async () => {
      const response = await fetch(`${server.url}/v1/lookup`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ ip: "1.0.0.1" }),
      });
      return { status: response.status, asn: ((await response.json()) as { asn?: number }).asn };
    };
    expect(await eventually(async () => (await ask()).status === 200, 5000)).toBe(true);

    // Four clients ask without pause, bounded in time, while the update runs.
    const answers: Array<{ status: number; asn?: number }> = [];
    let stopAt = Date.now() + 20_000;
    const client = async () => {
      while (Date.now() < stopAt) answers.push(await ask());
    };
    const clients = Promise.all([client(), client(), client(), client()]);
    await Bun.sleep(200);
    publisher.publish("/swap/ip2asn-combined.tsv.gz", { body: gzip(iptoasnTsv(64500)) });
    const updated = await cli(["data", "update", "--data", path]);
    expect(updated.code).toBe(0);
    const installedAt = Date.now();
    const swapped = await eventually(() => answers.at(-1)?.asn === 64500, 5000);
    const swapSeconds = (Date.now() - installedAt) / 1000;
    stopAt = Math.min(stopAt, Date.now() + 300);
    await clients;
    expect(swapped).toBe(true);
    // The server looks for a replaced file every second; the rest is loading it (and a
    // busy 2-core machine).
    expect(swapSeconds).toBeLessThan(2.5);
    expect(answers.filter((answer) => answer.status !== 200)).toEqual([]);
    expect(answers.some((answer) => answer.asn === 13335)).toBe(true);
    expect(answers.length).toBeGreaterThan(20);
  }, 40_000);

  test("serve --update-every 1s: updates in the background, metrics count successes and failures, logs carry no credential", async () => {
    const tarGz = await maxmindTarGz("GeoLite2-ASN", "20261120", geoLite2AsnMmdb(13335));
    const url = "/every/geoip/databases/GeoLite2-ASN/download";
    publisher.publish(`${url}?suffix=tar.gz`, { body: tarGz, auth: `123456:${LICENCE_KEY}`, filename: "GeoLite2-ASN_20261120.tar.gz" });
    const path = join(dir, "every.db");
    expect((await cli(["data", "import", "--data", path, `${publisher.url}${url}?suffix=tar.gz`], AUTH)).code).toBe(0);
    const server = await startServerProcess(["--data", path, "--state", join(dir, "every-state.db"), "--update-every", "1s"], { env: AUTH });
    servers.push(server);
    expect(server.stderr()).toContain('"update_every":"1s"');
    const metrics = async () => {
      const text = await (await fetch(`${server.url}/metrics`)).text();
      const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1]);
      return { text, lastSuccess: value("iplookup_data_update_last_success_timestamp_seconds"), failures: value("iplookup_data_update_failures_total") };
    };
    expect(await metrics()).toMatchObject({ lastSuccess: 0, failures: 0 });

    // Unchanged: a success all the same.
    expect(await eventually(async () => (await metrics()).lastSuccess > 0, 15_000)).toBe(true);
    expect(server.stderr()).toContain('"msg":"data update: no source changed"');

    // Changed: installed by the child, loaded by the server.
    publisher.publish(`${url}?suffix=tar.gz`, {
      body: await maxmindTarGz("GeoLite2-ASN", "20261124", geoLite2AsnMmdb(64500)),
      auth: `123456:${LICENCE_KEY}`,
      filename: "GeoLite2-ASN_20261124.tar.gz",
    });
    expect(await eventually(() => server.stderr().includes('"msg":"data reloaded"'), 15_000)).toBe(true);
    expect(server.stderr()).toContain('"msg":"data updated; the server loads it within a second"');
    // The log names what was checked of the download (§13): here, no checksum is published.
    const updated = server.stderr().split("\n").find((line) => line.includes('"msg":"data updated; the server loads it within a second"'))!;
    expect((JSON.parse(updated) as { checksums: string[] }).checksums).toEqual([expect.stringMatching(/^no checksum published \(nothing at http:\/\/127\.0\.0\.1:\d+\/every\/geoip\/databases\/GeoLite2-ASN\/download\?suffix=tar\.gz\.sha256.*\): not verified$/)]);

    // Failing: counted and logged, the data loaded before still served.
    publisher.publish(`${url}?suffix=tar.gz`, { body: "", status: 500 });
    expect(await eventually(async () => (await metrics()).failures >= 1, 15_000)).toBe(true);
    expect(server.stderr()).toMatch(/"msg":"data update failed; still serving the data loaded before".*"error":"data update failed: source 1 \(http:\/\/127\.0\.0\.1:\d+\/every\/geoip\/databases\/GeoLite2-ASN\/download\?suffix=tar\.gz\): HTTP 500 Internal Server Error/);
    const last = await metrics();
    expect(last.lastSuccess).toBeGreaterThan(0);
    expect(last.text).toContain("# TYPE iplookup_data_update_failures_total counter");
    expect(last.text).toContain("# TYPE iplookup_data_update_last_success_timestamp_seconds gauge");
    expect(last.text).not.toContain(LICENCE_KEY);

    expect(await server.stop()).toBe(0);
    expect(server.stderr()).not.toContain(LICENCE_KEY);
  }, 60_000);

  test("--update-every is refused (exit 2) for a data file that records no sources, and for a bad duration", async () => {
    const noRecipe = await cli(["serve", "--port", "0", "--update-every", "1h", "--state", join(dir, "refused-state.db")]);
    expect(noRecipe.code).toBe(2);
    expect(noRecipe.stderr).toContain("--update-every: ");
    expect(noRecipe.stderr).toContain("records no sources to update from");
    for (const bad of ["5x", "500ms", "0s", "31d"]) {
      const result = await cli(["serve", "--port", "0", "--update-every", bad]);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain("--update-every: ");
    }
    expect((await cli(["serve", "--port", "0", "--state", join(dir, "refused-state.db")], { IPLOOKUP_UPDATE_EVERY: "soon" })).stderr).toContain("IPLOOKUP_UPDATE_EVERY: ");
  });
});

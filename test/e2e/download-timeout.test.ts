import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzip, iptoasnTsv } from "../support/download-fixtures.ts";
import { cliAsync as cli, startPublisher } from "../support/publisher.ts";
import { startServerProcess, type ServerProcess } from "../support/server-process.ts";

/**
 * CONTRACT §13, downloads end: a publisher that trickles a byte every 100 ms (its 2 KB
 * would take over three minutes) cannot hold `data update`, or the `serve
 * --update-every` loop, past --download-timeout.
 */
const dir = mkdtempSync(join(tmpdir(), "iplookup-download-timeout-"));
const publisher = startPublisher();
const servers: ServerProcess[] = [];
afterAll(async () => {
  for (const server of servers) await server.stop("SIGKILL");
  publisher.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function eventually(check: () => Promise<boolean> | boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await Bun.sleep(100);
  }
  return false;
}

const trickling = () => ({ body: gzip(iptoasnTsv(64500) + "\n".repeat(2000)), trickleMs: 100 });

describe("a trickling publisher", () => {
  test("data update --download-timeout 2s: stopped, exit 1 with the reason, the file as it was", async () => {
    publisher.publish("/t/ip2asn.tsv.gz", { body: gzip(iptoasnTsv(13335)) });
    const path = join(dir, "update.db");
    expect((await cli(["data", "import", "--data", path, `${publisher.url}/t/ip2asn.tsv.gz`])).code).toBe(0);
    const before = readFileSync(path);
    publisher.publish("/t/ip2asn.tsv.gz", trickling());
    const began = performance.now();
    const result = await cli(["data", "update", "--data", path, "--download-timeout", "2s"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`data update failed: source 1 (${publisher.url}/t/ip2asn.tsv.gz): the download was cut short after`);
    expect(result.stderr).toContain("(it did not end within --download-timeout 2 s)");
    // Far less than the trickle would take; the margin is for a loaded machine.
    expect(performance.now() - began).toBeLessThan(60_000);
    expect(readFileSync(path).equals(before)).toBe(true);
    expect(readdirSync(dir).filter((name) => name.includes("update.db"))).toEqual(["update.db"]);

    const bad = await cli(["data", "update", "--data", path, "--download-timeout", "soon"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--download-timeout: "soon" is not a duration');
  }, 90_000);

  test("serve --update-every 1s --download-timeout 2s: each round ends as a failure naming the deadline, the server still serving", async () => {
    publisher.publish("/s/ip2asn.tsv.gz", { body: gzip(iptoasnTsv(13335)) });
    const path = join(dir, "serve.db");
    expect((await cli(["data", "import", "--data", path, `${publisher.url}/s/ip2asn.tsv.gz`])).code).toBe(0);
    publisher.publish("/s/ip2asn.tsv.gz", trickling());
    const server = await startServerProcess(["--data", path, "--state", join(dir, "serve-state.db"), "--update-every", "1s", "--download-timeout", "2s", "--admin-port", "off"]);
    servers.push(server);
    const failures = async () => Number(/^iplookup_data_update_failures_total (\S+)$/m.exec(await (await fetch(`${server.url}/metrics`)).text())?.[1]);
    expect(await eventually(async () => (await failures()) >= 2, 60_000)).toBe(true);
    expect(server.stderr()).toContain("it did not end within --download-timeout 2 s");
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    expect(await server.stop()).toBe(0);
  }, 90_000);
});

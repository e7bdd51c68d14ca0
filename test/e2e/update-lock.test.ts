import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzip, iptoasnTsv } from "../support/download-fixtures.ts";
import { cliAsync as cli, startPublisher } from "../support/publisher.ts";
import { startServerProcess, type ServerProcess } from "../support/server-process.ts";
import { RangeIndex } from "../../src/index/range-index.ts";
import { parseAddress } from "../../src/address/parse.ts";

/**
 * CONTRACT §13: two updates of one data file never run at once. A first `data update`
 * (a real process) is held in its download by a trickling publisher; meanwhile a second
 * `data update`, a `data import` to the same file and `serve --update-every` each say
 * an update is already running and do nothing. Killed, the first leaves no lock stuck.
 */
const dir = mkdtempSync(join(tmpdir(), "iplookup-update-lock-"));
const publisher = startPublisher();
const servers: ServerProcess[] = [];
const children: Array<ReturnType<typeof Bun.spawn>> = [];
afterAll(async () => {
  for (const server of servers) await server.stop("SIGKILL");
  for (const child of children) child.kill("SIGKILL");
  publisher.stop();
  rmSync(dir, { recursive: true, force: true });
});
const MAIN = new URL("../../src/main.ts", import.meta.url).pathname;

async function eventually(check: () => Promise<boolean> | boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await Bun.sleep(50);
  }
  return false;
}

const asnAt = (path: string) => RangeIndex.open(path).lookup(parseAddress("1.0.0.1")!)?.record.asn;

/** Starts `data update` on `path` and returns once its download has begun (it holds the lock then). */
async function updateHeldInDownload(path: string, source: string) {
  const asked = publisher.requests.filter((request) => request.path === source).length;
  const child = Bun.spawn([process.execPath, MAIN, "data", "update", "--data", path], { env: { ...process.env }, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  children.push(child);
  expect(await eventually(() => publisher.requests.filter((request) => request.path === source).length > asked, 15_000)).toBe(true);
  return child;
}

describe("one update of a data file at a time", () => {
  test("a second data update, and a data import to the same file, say one is running and change nothing; a killed holder leaves no lock", async () => {
    const source = "/lock/ip2asn.tsv.gz";
    publisher.publish(source, { body: gzip(iptoasnTsv(13335)) });
    const path = join(dir, "data.db");
    expect((await cli(["data", "import", "--data", path, `${publisher.url}${source}`])).code).toBe(0);
    const before = readFileSync(path);

    publisher.publish(source, { body: gzip(iptoasnTsv(64500)), trickleMs: 200 });
    const first = await updateHeldInDownload(path, source);

    const second = await cli(["data", "update", "--data", path]);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`an update of ${path} is already running`);
    const asked = publisher.requests.length;
    const importing = await cli(["data", "import", "--data", path, `${publisher.url}${source}`]);
    expect(importing.code).toBe(1);
    expect(importing.stderr).toContain(`an update of ${path} is already running`);
    // Neither asked the publisher anything, nor touched the file.
    expect(publisher.requests.length).toBe(asked);
    expect(readFileSync(path).equals(before)).toBe(true);

    // The first, killed mid-download: the next update runs.
    first.kill("SIGKILL");
    await first.exited;
    publisher.publish(source, { body: gzip(iptoasnTsv(64500)) });
    const after = await cli(["data", "update", "--data", path]);
    expect(after.stderr).not.toContain("already running");
    expect(after.code).toBe(0);
    expect(asnAt(path)).toBe(64500);
  }, 60_000);

  test("serve --update-every skips its round while a data update by hand runs, without counting a failure", async () => {
    const source = "/serve/ip2asn.tsv.gz";
    publisher.publish(source, { body: gzip(iptoasnTsv(13335)) });
    const path = join(dir, "served.db");
    expect((await cli(["data", "import", "--data", path, `${publisher.url}${source}`])).code).toBe(0);
    publisher.publish(source, { body: gzip(iptoasnTsv(64500)), trickleMs: 200 });
    const byHand = await updateHeldInDownload(path, source);
    const asked = publisher.requests.filter((request) => request.path === source).length;

    const server = await startServerProcess(["--data", path, "--state", join(dir, "state.db"), "--update-every", "1s", "--admin-port", "off"]);
    servers.push(server);
    expect(await eventually(() => server.stderr().split('"msg":"data update skipped: another update of the data file is running"').length > 2, 20_000)).toBe(true);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(/^iplookup_data_update_failures_total 0$/m);
    // The server's rounds asked the publisher nothing while the update by hand ran.
    expect(publisher.requests.filter((request) => request.path === source).length).toBe(asked);

    byHand.kill("SIGKILL");
    await byHand.exited;
    publisher.publish(source, { body: gzip(iptoasnTsv(64500)) });
    expect(await eventually(() => server.stderr().includes('"msg":"data updated; the server loads it within a second"'), 20_000)).toBe(true);
    expect(await server.stop()).toBe(0);
  }, 60_000);
});

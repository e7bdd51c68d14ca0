import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzip, iptoasnTsv } from "../support/download-fixtures.ts";
import { cliAsync as cli, startPublisher } from "../support/publisher.ts";
import { startServerProcess, type ServerProcess } from "../support/server-process.ts";

/**
 * A `data import` or `data update` stopped by a signal (CONTRACT §6, §13: nothing
 * half-written is left): SIGTERM, SIGINT or SIGHUP while a download trickles in ends it
 * with 128 + the signal's number, the installed file as it was, and nothing beside it:
 * no downloads' folder, no data file under a temporary name, no lock. What a killed one
 * (SIGKILL) leaves, the next one removes.
 */
const root = mkdtempSync(join(tmpdir(), "iplookup-data-stop-"));
const publisher = startPublisher();
const children: Array<ReturnType<typeof Bun.spawn>> = [];
const servers: ServerProcess[] = [];
afterAll(async () => {
  for (const server of servers) await server.stop("SIGKILL");
  for (const child of children) child.kill("SIGKILL");
  publisher.stop();
  rmSync(root, { recursive: true, force: true });
});
const MAIN = new URL("../../src/main.ts", import.meta.url).pathname;

async function eventually(check: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (check()) return true;
    await Bun.sleep(25);
  }
  return false;
}

/** The bytes of the files under `folder`, all of them, at any depth. */
function bytesUnder(folder: string): number {
  let total = 0;
  for (const entry of readdirSync(folder, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += statSync(join(entry.parentPath, entry.name)).size;
  }
  return total;
}

/** Whether part of a download has reached the downloads' folder beside the data file in `folder`. */
function downloadBegun(folder: string): boolean {
  const work = readdirSync(folder).find((entry) => entry.startsWith(".data.db.sources-"));
  return work !== undefined && bytesUnder(join(folder, work)) > 0;
}

let folders = 0;
/** A folder holding data.db, imported from `source` (published whole). */
async function installed(source: string): Promise<{ folder: string; path: string; bytes: Buffer }> {
  const folder = join(root, `f${++folders}`);
  mkdirSync(folder);
  const path = join(folder, "data.db");
  publisher.publish(source, { body: gzip(iptoasnTsv(13335)) });
  expect((await cli(["data", "import", "--data", path, "--license", "PDDL 1.0", "--attribution", "x", `${publisher.url}${source}`])).code).toBe(0);
  return { folder, path, bytes: readFileSync(path) };
}

/** Runs `iplookup ARGS`, and sends it `signal` once the first bytes of its download are on disk in `folder`. */
async function stoppedInDownload(args: string[], folder: string, signal: NodeJS.Signals): Promise<{ code: number; stderr: string }> {
  const child = Bun.spawn([process.execPath, MAIN, ...args], { env: { ...process.env }, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  children.push(child);
  const stderr = new Response(child.stderr).text();
  expect(await eventually(() => downloadBegun(folder), 15_000)).toBe(true);
  child.kill(signal);
  return { code: await child.exited, stderr: await stderr };
}

describe("a data import or update stopped by a signal", () => {
  for (const [signal, code] of [
    ["SIGTERM", 143],
    ["SIGINT", 130],
    ["SIGHUP", 129],
  ] as const) {
    test(`data update, ${signal} in its download: exit ${code}, the file as it was, nothing left beside it`, async () => {
      const source = `/update-${signal}/ip2asn.tsv.gz`;
      const { folder, path, bytes } = await installed(source);
      publisher.publish(source, { body: gzip(iptoasnTsv(64500)), trickleMs: 40 });
      const stopped = await stoppedInDownload(["data", "update", "--data", path], folder, signal);
      expect(stopped.code).toBe(code);
      expect(readFileSync(path).equals(bytes)).toBe(true);
      expect(readdirSync(folder)).toEqual(["data.db"]);
    }, 30_000);
  }

  test("data import, SIGINT in its download: exit 130, the installed file as it was, nothing left beside it", async () => {
    const { folder, path, bytes } = await installed("/import-int/first.tsv.gz");
    publisher.publish("/import-int/ip2asn.tsv.gz", { body: gzip(iptoasnTsv(64500)), trickleMs: 40 });
    const stopped = await stoppedInDownload(["data", "import", "--data", path, `${publisher.url}/import-int/ip2asn.tsv.gz`], folder, "SIGINT");
    expect(stopped.code).toBe(130);
    expect(readFileSync(path).equals(bytes)).toBe(true);
    expect(readdirSync(folder)).toEqual(["data.db"]);
  }, 30_000);

  test("data import, SIGTERM while it writes the data file: exit 143, the installed file as it was, nothing left beside it", async () => {
    const { folder, path, bytes } = await installed("/import-write/first.tsv.gz");
    // Enough rows that writing them takes a while (400,000: about 2 s), all of it without
    // a turn of the event loop, so the signal waits for the write to end.
    const rows: string[] = [];
    for (let i = 0; i < 400_000; i++) {
      const prefix = `${11 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`;
      rows.push(`${prefix}.0\t${prefix}.255\t${64512 + (i % 1000)}\tUS\tNET-${i}`);
    }
    const source = join(root, "many-rows.tsv");
    writeFileSync(source, `${rows.join("\n")}\n`);
    const child = Bun.spawn([process.execPath, MAIN, "data", "import", "--data", path, "--license", "PDDL 1.0", "--attribution", "x", source], {
      env: { ...process.env },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "ignore",
    });
    children.push(child);
    const stdout = new Response(child.stdout).text();
    // data.db.PID.tmp: the data file under its temporary name, there while it is written.
    const writing = `data.db.${child.pid}.tmp`;
    expect(await eventually(() => readdirSync(folder).includes(writing), 30_000)).toBe(true);
    child.kill("SIGTERM");
    expect(await child.exited).toBe(143);
    expect(await stdout).toBe("");
    expect(readFileSync(path).equals(bytes)).toBe(true);
    expect(readdirSync(folder)).toEqual(["data.db"]);
  }, 60_000);

  test("what a killed update left (its downloads, a data file under a dead process's temporary name, its journal) goes with the next update", async () => {
    const source = "/killed/ip2asn.tsv.gz";
    const { folder, path } = await installed(source);
    publisher.publish(source, { body: gzip(iptoasnTsv(64500)), trickleMs: 40 });
    expect((await stoppedInDownload(["data", "update", "--data", path], folder, "SIGKILL")).code).toBe(137);
    // A data file a killed update was writing: its process is gone.
    const dead = Bun.spawn(["true"]);
    await dead.exited;
    writeFileSync(join(folder, `data.db.${dead.pid}.tmp`), "partial");
    writeFileSync(join(folder, `data.db.${dead.pid}.tmp-journal`), "journal");
    expect(readdirSync(folder).length).toBeGreaterThan(3);

    publisher.publish(source, { body: gzip(iptoasnTsv(64500)) });
    const next = await cli(["data", "update", "--data", path]);
    expect(next.code).toBe(0);
    expect(readdirSync(folder)).toEqual(["data.db"]);
  }, 30_000);

  test("serve --update-every, SIGTERM while its update downloads: the update is stopped and cleans up, and serve exits at once", async () => {
    const source = "/serve/ip2asn.tsv.gz";
    const { folder, path } = await installed(source);
    publisher.publish(source, { body: gzip(iptoasnTsv(64500)), trickleMs: 40 });
    const server = await startServerProcess(["--data", path, "--state", join(root, "serve-state.db"), "--update-every", "1s", "--admin-port", "off"]);
    servers.push(server);
    expect(await eventually(() => downloadBegun(folder), 20_000)).toBe(true);
    const asked = performance.now();
    expect(await server.stop("SIGTERM")).toBe(0);
    // Not a benchmark: a stop that waits out a 5 s timer after its update has ended.
    expect(performance.now() - asked).toBeLessThan(4000);
    expect(readdirSync(folder)).toEqual(["data.db"]);
  }, 40_000);
});

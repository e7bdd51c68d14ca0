/**
 * The AS routes on `serve --workers 2` over real sockets: every thread answers the same
 * AS from the shared AS index, and a data reload swaps it in every thread (CONTRACT §8, §14).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultDataPath } from "../../src/config/paths.ts";
import { buildDataSet } from "../../src/importer/build.ts";
import { writeDataFile } from "../../src/importer/data-file.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { heavyTurn } from "../support/heavy-turn.ts";
import { startServerProcess, type ServerProcess } from "../support/server-process.ts";
import { writeSmallSources } from "../support/small-dataset.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-asn-workers-"));
let server: ServerProcess | undefined;
let endTurn = () => {};
beforeAll(async () => {
  endTurn = await heavyTurn();
}, 120_000);
afterAll(async () => {
  await server?.stop("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
  endTurn();
});

test("two threads answer an AS alike, and a reload swaps the AS index in both", async () => {
  const data = join(dir, "data.db");
  copyFileSync(defaultDataPath(), data);
  mkdirSync(join(dir, "small"));
  const small = join(dir, "small", "data.db");
  writeDataFile(small, await buildDataSet(writeSmallSources(join(dir, "small")), new Date("2026-01-01T00:00:00Z")));
  const state = join(dir, "state.db");
  server = await startServerProcess(["--state", state, "--workers", "2", "--data", data, "--log-level", "info", "--admin-port", "off"]);
  const store = SqliteStore.open(state);
  const { secret } = await store.createKey("w", "unlimited");
  await store.close();
  const url = server.url;
  // Each request on a connection of its own: the kernel spreads them over both threads.
  const answers = () =>
    Promise.all(
      Array.from({ length: 16 }, async () => {
        const response = await fetch(`${url}/v1/asn/AS13335`, { headers: { authorization: `Bearer ${secret}`, connection: "close" } });
        return `${response.status} ${response.headers.get("x-data-version")} ${await response.text()}`;
      }),
    );
  const before = new Set(await answers());
  expect(before.size).toBe(1);
  expect([...before][0]).toContain('"found":true,"name":"Cloudflare, Inc."');

  copyFileSync(small, `${data}.new`);
  renameSync(`${data}.new`, data);
  const deadline = Date.now() + 5000;
  while (!server.stderr().includes('"msg":"data reloaded"') && Date.now() < deadline) await Bun.sleep(50);
  const after = new Set(await answers());
  expect(after.size).toBe(1);
  // The small data set: 1.0.0.0/24 is AS13335 but for 1.0.0.128/28 (AS64500), and one IPv6 address.
  const body = JSON.parse(([...after][0] as string).split(" ").slice(2).join(" "));
  expect(body).toMatchObject({ asn: 13335, found: true, num_ips: 240, prefixes: ["1.0.0.0/25", "1.0.0.144/28", "1.0.0.160/27", "1.0.0.192/26"], prefixes6: ["2606:4700:4700::1111/128"] });
}, 60_000);

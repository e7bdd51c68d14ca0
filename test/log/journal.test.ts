import { afterAll, expect, test } from "bun:test";
import { closeSync, fstatSync, mkdtempSync, openSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServerFor } from "../../src/cli/commands/serve.ts";
import { runCli } from "../../src/cli/run.ts";
import { defaultDataPath } from "../../src/config/paths.ts";
import { readServeConfig } from "../../src/config/serve-config.ts";
import { writesToJournal } from "../../src/log/journal.ts";
import { createLogger } from "../../src/log/logger.ts";

/**
 * Under systemd with stderr connected to the journal (JOURNAL_STREAM names that stream),
 * every log line starts with its level's syslog priority, so the journal files it at
 * that priority (`journalctl -p warning`); anywhere else the lines are bare JSON.
 */
const dir = mkdtempSync(join(tmpdir(), "iplookup-journal-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const streamOf = (fd: number) => {
  const { dev, ino } = fstatSync(fd);
  return `${dev}:${ino}`;
};

test("stderr is the journal only when JOURNAL_STREAM names the very stream it is", () => {
  const fd = openSync(join(dir, "stream"), "w");
  try {
    expect(writesToJournal(streamOf(fd), fd)).toBe(true);
    expect(writesToJournal(undefined, fd)).toBe(false);
    expect(writesToJournal("", fd)).toBe(false);
    // The journal's stream handed down, and stderr since pointed elsewhere (a pipe, a file).
    expect(writesToJournal(streamOf(fd), 2)).toBe(streamOf(2) === streamOf(fd));
    expect(writesToJournal("1:2", fd)).toBe(false);
  } finally {
    closeSync(fd);
  }
});

test("a logger for the journal starts each line with its level's priority; the rest is the same JSON", () => {
  const lines: string[] = [];
  const plain: string[] = [];
  const at = () => new Date("2026-11-29T00:00:00.000Z");
  const journal = createLogger("debug", (line) => lines.push(line), at, true);
  const bare = createLogger("debug", (line) => plain.push(line), at);
  for (const logger of [journal, bare]) {
    logger.log("debug", "d");
    logger.log("info", "i", { n: 1 });
    logger.log("warn", "w");
    logger.log("error", "e");
    logger.announce("a");
    logger.logFormatted("info", (time) => JSON.stringify({ time, level: "info", msg: "access" }));
  }
  expect(lines.map((line) => line.slice(0, 3))).toEqual(["<7>", "<6>", "<4>", "<3>", "<6>", "<6>"]);
  expect(lines.map((line) => line.slice(3))).toEqual(plain);
  expect(plain.every((line) => line.startsWith("{"))).toBe(true);
});

test("serve on the journal: every thread's lines carry their priority, access lines included", async () => {
  const lines: string[] = [];
  const config = readServeConfig({ host: "127.0.0.1", port: "0", state: join(dir, "state.db"), "log-level": "info", "admin-port": "off", workers: "2" }, {});
  const server = await startServerFor(config, {
    // This process's own stderr stands for the journal's stream.
    env: { JOURNAL_STREAM: streamOf(2) },
    io: { out: (line) => lines.push(line), err: (line) => lines.push(...line.split("\n").filter(Boolean)) },
    now: () => new Date(),
    defaultDataPath: defaultDataPath(),
    selfCommand: [],
  });
  try {
    for (let i = 0; i < 8; i++) expect((await fetch(`${server.url}/healthz`, { headers: { connection: "close" } })).status).toBe(200);
    const missing = await fetch(`${server.url}/v1/lookup`, { method: "POST", headers: { connection: "close" } });
    expect(missing.status).toBe(401);
  } finally {
    await server.stop();
  }
  expect(lines.length).toBeGreaterThanOrEqual(10);
  for (const line of lines) expect(line).toMatch(/^<[3467]>\{/);
  const levels = lines.map((line) => [line.slice(0, 3), (JSON.parse(line.slice(3)) as { level: string }).level]);
  for (const [priority, level] of levels) expect({ info: "<6>", warn: "<4>", error: "<3>", debug: "<7>" }[level!]).toBe(priority!);
  // The nine access lines, from both threads (a request id starts with its thread's own prefix).
  const requests = lines.map((line) => JSON.parse(line.slice(3)) as { msg: string; request_id?: string }).filter((line) => line.msg === "request");
  expect(requests.length).toBe(9);
  expect(new Set(requests.map((line) => line.request_id!.split("-")[0])).size).toBe(2);
});

test("a command's failure on the journal is filed at error priority; off it, the same line bare", async () => {
  const failed = async (env: Record<string, string>) => {
    const err: string[] = [];
    const code = await runCli(["keys", "list", "--state", join(dir, "missing", "state.db")], {
      env,
      io: { out: () => {}, err: (line) => err.push(line) },
      now: () => new Date(),
      defaultDataPath: defaultDataPath(),
      selfCommand: ["iplookup"],
    });
    return { code, err };
  };
  const journal = await failed({ JOURNAL_STREAM: streamOf(2) });
  const bare = await failed({});
  expect([journal.code, bare.code]).toEqual([1, 1]);
  expect(bare.err[0]).toStartWith("iplookup: there is no state file at ");
  expect(journal.err).toEqual([`<3>${bare.err[0]}`]);
});

import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { cli, startServerProcess, type ServerProcess } from "../support/server-process.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-hostile-"));
const state = join(dir, "state.db");
let server: ServerProcess;
let secret: string;
let keyId: string;

beforeAll(async () => {
  const store = SqliteStore.open(state);
  const issued = await store.createKey("hostile", "unlimited");
  await store.close();
  secret = issued.secret;
  keyId = issued.key.id;
  server = await startServerProcess(["--state", state, "--log-level", "debug"]);
});

afterAll(async () => {
  await server?.stop("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

const lookup = (key: string, ip = "1.1.1.1") =>
  fetch(`${server.url}/v1/lookup`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ ip }) });

function rss(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]) / 1024;
}

const unitsUsed = async () => ((await (await fetch(`${server.url}/v1/usage`, { headers: { authorization: `Bearer ${secret}` } })).json()) as { units: { used: number } }).units.used;

test("a 10 MB body on a real socket is refused with payload_too_large, charging nothing", async () => {
  const before = await unitsUsed();
  const response = await fetch(`${server.url}/v1/lookup/batch`, {
    method: "POST",
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
    body: `{"ips":["${"1".repeat(10 * 1024 * 1024)}"]}`,
  });
  expect(response.status).toBe(413);
  expect(((await response.json()) as { code: string }).code).toBe("payload_too_large");
  expect(await unitsUsed()).toBe(before);
  expect((await lookup(secret)).status).toBe(200);
});

test("hundreds of slow clients holding connections do not stop others being answered, and memory stays bounded", async () => {
  const before = rss(server.process.pid);
  const port = Number(new URL(server.url).port);
  const sockets = await Promise.all(
    Array.from({ length: 300 }, () =>
      Bun.connect({
        hostname: "127.0.0.1",
        port,
        socket: { data() {}, error() {} },
      }).then((socket) => {
        // Half a request: the headers never end.
        socket.write(`POST /v1/lookup HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${secret}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"ip":`);
        return socket;
      }),
    ),
  );
  try {
    const began = performance.now();
    const answers = await Promise.all(Array.from({ length: 20 }, () => lookup(secret)));
    expect(answers.map((response) => response.status)).toEqual(Array(20).fill(200));
    expect(performance.now() - began).toBeLessThan(5000);
    expect(rss(server.process.pid) - before).toBeLessThan(100);
  } finally {
    for (const socket of sockets) socket.end();
  }
  expect((await lookup(secret)).status).toBe(200);
});

test("many bad keys from one address are slowed down with 429, while a valid key from it still works", async () => {
  const statuses: number[] = [];
  for (let i = 0; i < 40; i++) statuses.push((await lookup(`ipl_guess${i}`)).status);
  expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
  expect(statuses.filter((status) => status === 429).length).toBeGreaterThan(20);
  const limited = await lookup("ipl_one_more");
  expect(limited.status).toBe(429);
  expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  expect((await lookup(secret)).status).toBe(200);
});

test("a key rotated with the CLI is refused by the running server within a second; its new secret works", async () => {
  const rotated = cli(["keys", "rotate", keyId, "--json", "--state", state]);
  expect(rotated.code).toBe(0);
  const fresh = (JSON.parse(rotated.stdout) as { key: string }).key;
  await Bun.sleep(1000);
  expect((await lookup(secret)).status).not.toBe(200);
  expect((await lookup(fresh)).status).toBe(200);
  secret = fresh;
});

test("no secret, valid or not, ever appears in a log line", async () => {
  await Bun.sleep(100);
  const logs = server.stderr();
  expect(logs).toContain('"msg":"request"');
  expect(logs).not.toContain(secret);
  expect(logs).not.toContain("ipl_guess");
  expect(logs).not.toContain("ipl_one_more");
  expect(logs).not.toContain("Bearer");
});

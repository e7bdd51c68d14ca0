/**
 * CONTRACT §13: nothing is charged for an answer nobody receives, when the client has
 * gone before the units are committed. The state store's lock is held so that the
 * commit waits (the server tries it again, up to two seconds); meanwhile one client
 * resets its connection and another waits for its answer.
 */
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore } from "../../src/store/open-store.ts";
import { postgresAvailable, testStates } from "../support/postgres.ts";
import { rawRequest } from "../support/raw-http.ts";
import { startServerProcess, type ServerProcess } from "../support/server-process.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-client-gone-"));
const servers: ServerProcess[] = [];
afterAll(async () => {
  for (const server of servers) await server.stop("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

const ips = Array.from({ length: 100 }, (_, i) => `1.1.${i}.1`);

function batchRequest(secret: string): string {
  const body = JSON.stringify({ ips });
  return `POST /v1/lookup/batch HTTP/1.1\r\nHost: ip\r\nAuthorization: Bearer ${secret}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`;
}

/** Sends the request, then resets the connection after `afterMs`, without reading an answer. */
async function sendAndReset(port: number, request: string, afterMs: number): Promise<void> {
  const socket = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {}, error() {} } });
  socket.write(request);
  await Bun.sleep(afterMs);
  socket.terminate();
}

/**
 * Sends the request and, at once, closes the connection (FIN) or resets it (RST), without
 * reading an answer: the server reads the close with the request, or very soon after.
 */
async function sendAndLeave(port: number, request: string, how: "close" | "reset"): Promise<void> {
  const socket = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {}, error() {} } });
  if (how === "close") {
    expect(socket.end(request)).toBe(request.length);
    return;
  }
  expect(socket.write(request)).toBe(request.length);
  socket.terminate();
}

/** The server's access lines for `route`, once it has written `count` of them (or 10 s have passed). */
async function accessLines(server: ServerProcess, route: string, count: number): Promise<Array<{ status: number; units: number }>> {
  const read = () =>
    server
      .stderr()
      .split("\n")
      .filter((line) => line.includes('"msg":"request"') && line.includes(`"route":"${route}"`))
      .map((line) => JSON.parse(line) as { status: number; units: number });
  const deadline = Date.now() + 10_000;
  while (read().length < count && Date.now() < deadline) await Bun.sleep(20);
  return read();
}

async function scenario(state: string, hold: () => Promise<() => Promise<void>>) {
  const store = await openStore(state);
  const { secret } = await store.createKey("gone", "unlimited");
  await store.close();
  const server = await startServerProcess(["--state", state, "--workers", "1", "--log-level", "info"]);
  servers.push(server);
  const port = Number(new URL(server.url).port);
  const release = await hold();
  let kept: Promise<Awaited<ReturnType<typeof rawRequest>>>;
  try {
    kept = rawRequest(port, batchRequest(secret), { timeoutMs: 10_000 });
    // Long enough for the server to read both requests and wait on the lock, and then to
    // see the reset, even on a busy machine; within the two seconds a charge may wait.
    await sendAndReset(port, batchRequest(secret), 500);
    await Bun.sleep(1000);
  } finally {
    await release();
  }
  const answer = await kept;
  expect(answer.status).toBe(200);
  expect(answer.headers["x-units-consumed"]).toBe("100");
  const usage = (await (await fetch(`${server.url}/v1/usage`, { headers: { authorization: `Bearer ${secret}` } })).json()) as { units: { used: number } };
  expect(usage.units.used).toBe(100);
  // The reset request is logged as gone, with no units.
  const deadline = Date.now() + 5000;
  while (!/"status":499/.test(server.stderr()) && Date.now() < deadline) await Bun.sleep(50);
  const gone = server.stderr().split("\n").find((line) => line.includes('"status":499'));
  expect(gone).toBeDefined();
  expect(gone).toContain('"units":0');
}

test("SQLite: the batch whose client reset is not charged; the one whose client waited is", async () => {
  const state = join(dir, "state.db");
  await scenario(state, async () => {
    const holder = new Database(state);
    holder.run("PRAGMA busy_timeout = 5000");
    holder.run("BEGIN IMMEDIATE");
    holder.run("UPDATE generation SET value = value");
    return async () => {
      holder.run("ROLLBACK");
      holder.close();
    };
  });
});

test("a client that leaves in the middle of its body: 499 in the access log, with its address, and in the metrics; not 400, nothing charged", async () => {
  const state = join(dir, "cut-body.db");
  const store = await openStore(state);
  const { secret } = await store.createKey("cut", "unlimited");
  await store.close();
  const server = await startServerProcess(["--state", state, "--workers", "1", "--log-level", "info"]);
  servers.push(server);
  const port = Number(new URL(server.url).port);
  const metric = async (status: number) =>
    Number(new RegExp(`^iplookup_http_requests_total\\{route="/v1/lookup",method="POST",status="${status}"\\} (\\d+)$`, "m").exec(await (await fetch(`${server.url}/metrics`)).text())?.[1] ?? 0);
  // 40 bytes announced, 15 sent; chunked, a chunk and no end.
  const partial = `POST /v1/lookup HTTP/1.1\r\nHost: ip\r\nAuthorization: Bearer ${secret}\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n{"ip":"1.1.1.1"`;
  const chunked = `POST /v1/lookup HTTP/1.1\r\nHost: ip\r\nAuthorization: Bearer ${secret}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"ip"\r\n`;
  for (const request of [partial, chunked]) await sendAndReset(port, request, 300);
  const deadline = Date.now() + 5000;
  while ((server.stderr().match(/"status":499/g) ?? []).length < 2 && Date.now() < deadline) await Bun.sleep(50);
  const lines = server.stderr().split("\n").filter((line) => line.includes('"route":"/v1/lookup"'));
  expect(lines).toHaveLength(2);
  for (const line of lines) {
    expect(line).toContain('"status":499');
    expect(line).toContain('"units":0');
  }
  // The client of the first was there when its request arrived: it is named. (Bun may
  // hand over a chunked request only once its connection has closed, and then there is
  // no peer to ask.)
  expect(lines[0]).toContain('"peer":"127.0.0.1"');
  expect([await metric(499), await metric(400)]).toEqual([2, 0]);
  const usage = (await (await fetch(`${server.url}/v1/usage`, { headers: { authorization: `Bearer ${secret}` } })).json()) as { units: { used: number } };
  expect(usage.units.used).toBe(0);
});

test("clients that reset while the server was busy with their large batches are not charged (no store lock held)", async () => {
  const state = join(dir, "busy.db");
  const store = await openStore(state);
  const { secret } = await store.createKey("busy", "unlimited");
  await store.close();
  const server = await startServerProcess(["--state", state, "--workers", "1", "--log-level", "info"]);
  servers.push(server);
  const port = Number(new URL(server.url).port);
  // Twenty batches of 10,000 IPv6 addresses: each takes the one thread several
  // milliseconds (parsing, 10,000 lookups, a 1.5 MB answer) even on a fast machine, and
  // all twenty arrive together, so most are reached well after their client has gone.
  const batch = JSON.stringify({ ips: Array.from({ length: 10_000 }, (_, i) => `2606:4700:${(i >> 8).toString(16)}:${(i & 255).toString(16)}::1`) });
  const request = `POST /v1/lookup/batch HTTP/1.1\r\nHost: ip\r\nAuthorization: Bearer ${secret}\r\nContent-Type: application/json\r\nContent-Length: ${batch.length}\r\nConnection: close\r\n\r\n${batch}`;
  await Promise.all(Array.from({ length: 20 }, () => sendAndReset(port, request, 15)));
  const batchLines = () => server.stderr().split("\n").filter((line) => line.includes('"route":"/v1/lookup/batch"'));
  const deadline = Date.now() + 10_000;
  while (batchLines().length < 20 && Date.now() < deadline) await Bun.sleep(50);
  const lines = batchLines();
  expect(lines).toHaveLength(20);
  const answered = lines.filter((line) => line.includes('"status":200')).length;
  const gone = lines.filter((line) => line.includes('"status":499') && line.includes('"units":0')).length;
  expect(answered + gone).toBe(20);
  // An answer can only leave before its client resets (15 ms after sending) if it was
  // among the first; the rest are seen gone.
  expect(gone).toBeGreaterThanOrEqual(10);
  const usage = (await (await fetch(`${server.url}/v1/usage`, { headers: { authorization: `Bearer ${secret}` } })).json()) as { units: { used: number } };
  expect(usage.units.used).toBe(answered * 10_000);
});

test("GET /v1/me from clients that reset their connections at once: 200 or 499, never 500, and no error logged", async () => {
  const state = join(dir, "me.db");
  const store = await openStore(state);
  const { secret } = await store.createKey("me", "unlimited");
  await store.close();
  const server = await startServerProcess(["--state", state, "--workers", "1", "--log-level", "info"]);
  servers.push(server);
  const port = Number(new URL(server.url).port);
  const count = 40;
  // Bun answers no peer for a connection it has seen reset, which most of these are by
  // the time their request is handled.
  for (let n = 0; n < count; n++) await sendAndLeave(port, `GET /v1/me HTTP/1.1\r\nHost: ip\r\nAuthorization: Bearer ${secret}\r\n\r\n`, "reset");
  const lines = await accessLines(server, "/v1/me", count);
  expect(lines).toHaveLength(count);
  const statuses = lines.map((line) => line.status);
  expect(statuses.filter((status) => status !== 200 && status !== 499)).toEqual([]);
  expect(statuses).toContain(499);
  expect(server.stderr()).not.toContain('"level":"error"');
  const metrics = await (await fetch(`${server.url}/metrics`)).text();
  expect(metrics).not.toContain('iplookup_http_requests_total{route="/v1/me",method="GET",status="500"}');
});

test("batches of 10,000 whose clients close or reset their connections as soon as they have sent them: 499, nothing charged", async () => {
  const state = join(dir, "leave-at-once.db");
  const store = await openStore(state);
  const { secret } = await store.createKey("leave", "unlimited");
  await store.close();
  const server = await startServerProcess(["--state", state, "--workers", "1", "--log-level", "info"]);
  servers.push(server);
  const port = Number(new URL(server.url).port);
  const body = JSON.stringify({ ips: Array.from({ length: 10_000 }, (_, i) => `8.8.${i >> 8}.${i & 255}`) });
  const request = `POST /v1/lookup/batch HTTP/1.1\r\nHost: ip\r\nAuthorization: Bearer ${secret}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
  // One at a time: each is handled in a few milliseconds, with nothing else to wait for,
  // well after its client has gone.
  let sent = 0;
  for (const how of ["close", "reset"] as const) {
    for (let n = 0; n < 5; n++) {
      await sendAndLeave(port, request, how);
      expect(await accessLines(server, "/v1/lookup/batch", ++sent)).toHaveLength(sent);
    }
  }
  expect((await accessLines(server, "/v1/lookup/batch", sent)).map(({ status, units }) => [status, units])).toEqual(Array.from({ length: sent }, () => [499, 0]));
  const usage = (await (await fetch(`${server.url}/v1/usage`, { headers: { authorization: `Bearer ${secret}` } })).json()) as { units: { used: number } };
  expect(usage.units.used).toBe(0);
  // A client that waits for its answer is charged.
  const answer = await rawRequest(port, request.replace("\r\n\r\n", "\r\nConnection: close\r\n\r\n"), { timeoutMs: 10_000 });
  expect([answer.status, answer.headers["x-units-consumed"]]).toEqual([200, "10000"]);
});

const states = testStates();
describe.skipIf(!postgresAvailable)("PostgreSQL", () => {
  test("the batch whose client reset is not charged; the one whose client waited is", async () => {
    const state = await states.fresh();
    await scenario(state, async () => {
      const holder = new SQL(state, { max: 1 });
      const release = Promise.withResolvers<void>();
      const locked = Promise.withResolvers<void>();
      const held = holder.begin(async (tx) => {
        await tx`LOCK TABLE usage IN EXCLUSIVE MODE`;
        locked.resolve();
        await release.promise;
      });
      await locked.promise;
      return async () => {
        release.resolve();
        await held;
        await holder.close();
      };
    });
  });
});

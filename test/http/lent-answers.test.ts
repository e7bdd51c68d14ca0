import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { startServerProcess, type ServerProcess } from "../support/server-process.ts";

// A large answer's buffer is lent (AnswerBuffers) and given back once the answer's
// stream has written it: from then on other answers write into it. This holds that the
// bytes a slow client has not yet read are the server's own copy, not the lent buffer.

// A server of its own process, on one thread (every answer written by the same lookup
// service, from the same buffers), so that the test's own work never holds it up.
let server: ServerProcess;
let key: string;
let port: number;
const dir = mkdtempSync(join(tmpdir(), "iplookup-lent-"));

beforeAll(async () => {
  const statePath = join(dir, "state.db");
  const store = SqliteStore.open(statePath);
  key = (await store.createKey("lent answers test", "unlimited")).secret;
  await store.close();
  server = await startServerProcess(["--state", statePath, "--admin-port", "off"]);
  port = Number(new URL(server.url).port);
});
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A batch of 10,000 public IPv4 addresses, all with `first` as their first octet. */
const batchBody = (first: number) => JSON.stringify({ ips: Array.from({ length: 10_000 }, (_, i) => `${first}.${(i >> 8) & 255}.${i & 255}.1`) });

const post = (body: string) =>
  fetch(`${server.url}/v1/lookup/batch`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body });

/** The body of a chunked HTTP/1.1 answer, read off `raw`. */
function chunkedBody(raw: Buffer): string {
  let at = raw.indexOf("\r\n\r\n") + 4;
  const pieces: Buffer[] = [];
  for (;;) {
    const lineEnd = raw.indexOf("\r\n", at);
    const size = Number.parseInt(raw.subarray(at, lineEnd).toString("latin1"), 16);
    if (!(size > 0)) break;
    pieces.push(raw.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
  return Buffer.concat(pieces).toString("utf8");
}

test("a client that reads its large answer late gets it whole, though other answers were written since", async () => {
  const body = batchBody(8);
  const socket = connect({ host: "127.0.0.1", port });
  socket.pause();
  await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
  socket.write(
    [
      "POST /v1/lookup/batch HTTP/1.1",
      "Host: iplookup.test",
      `Authorization: Bearer ${key}`,
      "Content-Type: application/json",
      `Content-Length: ${Buffer.byteLength(body)}`,
      "Connection: close",
      "",
      body,
    ].join("\r\n"),
  );
  // The server answers while the client reads nothing: ~2.9 MB, far more than the
  // socket's buffers take, so most of it waits in the server. Once its units are
  // charged (its answer is then being written), other batches are answered, in buffers
  // given back by the answers before them.
  const used = async () => {
    const usage = await fetch(`${server.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } });
    return ((await usage.json()) as { units: { used: number } }).units.used;
  };
  while ((await used()) < 10_000) await Bun.sleep(20);
  const others = [31, 45, 62].map(batchBody);
  for (const other of others) {
    const answer = await post(other);
    expect(answer.status).toBe(200);
    expect(JSON.parse(await answer.text()).results).toHaveLength(10_000);
  }
  const received: Buffer[] = [];
  socket.on("data", (data: Buffer) => received.push(data));
  socket.resume();
  await new Promise<void>((resolve) => socket.once("close", () => resolve()));
  const late = chunkedBody(Buffer.concat(received));
  const again = await (await post(body)).text();
  expect(late.length).toBeGreaterThan(2_000_000);
  expect(late).toBe(again);
  expect(JSON.parse(late).results[9_999].ip).toBe("8.39.15.1");
});

import { afterAll, beforeAll, expect, test } from "bun:test";
import { connect } from "node:net";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { startSocketServer, type SocketServer } from "../support/in-process-server.ts";

// A large answer's buffer is lent (AnswerBuffers) and given back once the answer's
// stream has written it: from then on other answers write into it. This holds that the
// bytes a slow client has not yet read are the server's own copy, not the lent buffer.

let server: SocketServer;
let key: string;

beforeAll(async () => {
  // One thread, so that every answer is written by the same lookup service, from the same buffers.
  server = await startSocketServer({ workers: "1" });
  const store = SqliteStore.open(server.statePath);
  key = (await store.createKey("lent answers test", "unlimited")).secret;
  await store.close();
});
afterAll(() => server?.close());

/** A batch of 10,000 public IPv4 addresses, all with `first` as their first octet. */
const batchBody = (first: number) => JSON.stringify({ ips: Array.from({ length: 10_000 }, (_, i) => `${first}.${(i >> 8) & 255}.${i & 255}.1`) });

const post = (body: string) =>
  fetch(`http://127.0.0.1:${server.port}/v1/lookup/batch`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body });

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
  const socket = connect({ host: "127.0.0.1", port: server.port });
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
  // socket's buffers take, so most of it waits in the server. Meanwhile other batches
  // are answered, in buffers given back by the answers before them.
  await Bun.sleep(300);
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

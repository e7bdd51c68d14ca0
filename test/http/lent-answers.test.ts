import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect as connectTls } from "node:tls";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { selfSignedCertificate } from "../support/certificate.ts";
import { startServerProcess, type ServerProcess } from "../support/server-process.ts";

// A large answer's buffer is lent (AnswerBuffers) and given back once the answer's
// stream has written it: from then on other answers write into it. This holds that the
// bytes a slow client has not yet read are the server's own copy, not the lent buffer,
// over plain HTTP and over HTTPS (where the stream's bytes are encrypted on their way).

const dir = mkdtempSync(join(tmpdir(), "iplookup-lent-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The flags that serve HTTPS with a self-signed certificate for 127.0.0.1. */
function tlsFlags(): string[] {
  const { cert, key } = selfSignedCertificate(dir, "lent");
  return ["--tls-cert", cert, "--tls-key", key];
}

/** A batch of 10,000 public IPv4 addresses, all with `first` as their first octet. */
const batchBody = (first: number) => JSON.stringify({ ips: Array.from({ length: 10_000 }, (_, i) => `${first}.${(i >> 8) & 255}.${i & 255}.1`) });

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

describe.each([["HTTP", false], ["HTTPS", true]] as const)("lent answer buffers over %s", (_, tls) => {
  // A server of its own process, on one thread (every answer written by the same lookup
  // service, from the same buffers), so that the test's own work never holds it up.
  let server: ServerProcess;
  let key: string;

  beforeAll(async () => {
    const statePath = join(dir, `state-${tls ? "https" : "http"}.db`);
    const store = SqliteStore.open(statePath);
    key = (await store.createKey("lent answers test", "unlimited")).secret;
    await store.close();
    server = await startServerProcess(["--state", statePath, "--admin-port", "off", ...(tls ? tlsFlags() : [])]);
  });
  afterAll(() => server?.stop());

  const request = (path: string, init: RequestInit = {}) =>
    fetch(`${server.url}${path}`, { ...init, headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, tls: { rejectUnauthorized: false } });
  const post = (body: string) => request("/v1/lookup/batch", { method: "POST", body });

  test("a client that reads its large answer late gets it whole, though other answers were written since", async () => {
    const body = batchBody(8);
    const port = Number(new URL(server.url).port);
    const socket: Socket = tls ? connectTls({ host: "127.0.0.1", port, rejectUnauthorized: false }) : connect({ host: "127.0.0.1", port });
    socket.pause();
    await new Promise<void>((resolve) => socket.once(tls ? "secureConnect" : "connect", () => resolve()));
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
    const used = async () => ((await (await request("/v1/usage")).json()) as { units: { used: number } }).units.used;
    while ((await used()) < 10_000) await Bun.sleep(20);
    for (const other of [31, 45, 62].map(batchBody)) {
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
});

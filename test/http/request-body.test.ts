import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bodyStream, hideBodyStream } from "../../src/http/request-body.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { startSocketServer, type SocketServer } from "../support/in-process-server.ts";
import { rawRequest } from "../support/raw-http.ts";

test("a hidden body reads as null through request.body, and whole through bodyStream and bytes()", async () => {
  const request = new Request("http://iplookup.test/v1/lookup", { method: "POST", body: '{"ip":"1.1.1.1"}' });
  hideBodyStream(request);
  expect(request.body).toBeNull();
  const stream = bodyStream(request);
  expect(stream).toBeInstanceOf(ReadableStream);
  expect(await new Response(stream).text()).toBe('{"ip":"1.1.1.1"}');
  const other = new Request("http://iplookup.test/v1/lookup", { method: "POST", body: "{}" });
  hideBodyStream(other);
  expect(new TextDecoder().decode(await other.bytes())).toBe("{}");
  expect(bodyStream(new Request("http://iplookup.test/healthz"))).toBeNull();
});

describe("request bodies on a real socket, where the server hides their streams", () => {
  let server: SocketServer;
  let key: string;

  beforeAll(async () => {
    server = await startSocketServer({ "max-body": "1024" });
    const store = SqliteStore.open(server.statePath);
    key = (await store.createKey("request-body test", "unlimited")).secret;
    await store.close();
  });
  afterAll(() => server?.close());

  /** A batch sent chunked, without a Content-Length, in chunks of `size` bytes. */
  const chunked = (body: string, size: number) => {
    const chunks: string[] = [];
    for (let at = 0; at < body.length; at += size) {
      const piece = body.slice(at, at + size);
      chunks.push(`${piece.length.toString(16)}\r\n${piece}\r\n`);
    }
    return [
      "POST /v1/lookup/batch HTTP/1.1",
      "Host: iplookup.test",
      `Authorization: Bearer ${key}`,
      "Content-Type: application/json",
      "Transfer-Encoding: chunked",
      "Connection: close",
      "",
      `${chunks.join("")}0\r\n\r\n`,
    ].join("\r\n");
  };

  test("a chunked body is read whole and answered", async () => {
    const answer = await rawRequest(server.port, chunked(JSON.stringify({ ips: ["1.1.1.1", "8.8.8.8"] }), 7));
    expect(answer.status).toBe(200);
    expect((JSON.parse(answer.body) as { results: { ip: string }[] }).results.map((result) => result.ip)).toEqual(["1.1.1.1", "8.8.8.8"]);
  });

  test("a chunked body past --max-body is refused with payload_too_large", async () => {
    const ips = Array.from({ length: 100 }, (_, i) => `8.8.${i}.8`);
    const answer = await rawRequest(server.port, chunked(JSON.stringify({ ips }), 100));
    expect(answer.status).toBe(413);
    expect((JSON.parse(answer.body) as { code: string }).code).toBe("payload_too_large");
  });
});

import { afterAll, describe, expect, test } from "bun:test";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { startSocketServer, type SocketServer } from "../support/in-process-server.ts";

const servers: SocketServer[] = [];
afterAll(() => Promise.all(servers.map((server) => server.close())));

async function serverWithKey(flags: Record<string, string> = {}) {
  const server = await startSocketServer(flags);
  servers.push(server);
  const store = SqliteStore.open(server.statePath);
  const { secret } = await store.createKey("me-test", "unlimited");
  await store.close();
  await Bun.sleep(600); // the server picks new keys up within a second
  const me = async (headers: Record<string, string> = {}, url = server.url) =>
    (await (await fetch(`${url}/v1/me`, { headers: { authorization: `Bearer ${secret}`, ...headers } })).json()) as { ip: string; version: number };
  return { server, me };
}

const SPOOFS: Record<string, string>[] = [
  { "x-forwarded-for": "1.2.3.4" },
  { "x-forwarded-for": "1.2.3.4, 5.6.7.8" },
  { forwarded: "for=1.2.3.4" },
  { "x-real-ip": "1.2.3.4" },
  { "x-forwarded-for": "::1", "x-real-ip": "9.9.9.9", forwarded: 'for="[2001:db8::1]"' },
];

describe("GET /v1/me on a real socket", () => {
  test("answers the TCP peer, and forwarding headers from an untrusted peer change nothing", async () => {
    const { me } = await serverWithKey();
    expect(await me()).toEqual({ ip: "127.0.0.1", version: 4 });
    for (const headers of SPOOFS) expect(await me(headers)).toEqual({ ip: "127.0.0.1", version: 4 });
  });

  test("a peer that is not a trusted proxy cannot choose its address", async () => {
    const { me } = await serverWithKey({ "trust-proxy": "10.0.0.0/8" });
    for (const headers of SPOOFS) expect(await me(headers)).toEqual({ ip: "127.0.0.1", version: 4 });
  });

  test("behind a trusted proxy: the right-most untrusted X-Forwarded-For hop", async () => {
    const { me } = await serverWithKey({ "trust-proxy": "127.0.0.1,10.0.0.0/8" });
    expect(await me({ "x-forwarded-for": "203.0.113.9" })).toEqual({ ip: "203.0.113.9", version: 4 });
    expect(await me({ "x-forwarded-for": "6.6.6.6, 203.0.113.9, 10.1.2.3" })).toEqual({ ip: "203.0.113.9", version: 4 });
    expect(await me({ "x-forwarded-for": "2001:db8::7" })).toEqual({ ip: "2001:db8::7", version: 6 });
    expect(await me({ "x-real-ip": "9.9.9.9" })).toEqual({ ip: "127.0.0.1", version: 4 });
    expect(await me()).toEqual({ ip: "127.0.0.1", version: 4 });
  });

  test("the access log names the client /v1/me answers beside the peer behind trusted proxies, and only there", async () => {
    /** The server's access lines, once it has written `count` of them (or 10 s have passed). */
    const requestLines = async (server: SocketServer, count: number) => {
      const read = () => server.logs.flatMap((text) => text.split("\n")).filter((line) => line.includes('"msg":"request"')).map((line) => JSON.parse(line) as Record<string, unknown>);
      const deadline = Date.now() + 10_000;
      while (read().length < count && Date.now() < deadline) await Bun.sleep(20);
      return read();
    };
    const proxied = await serverWithKey({ "trust-proxy": "127.0.0.1", "log-level": "info" });
    expect(await proxied.me({ "x-forwarded-for": "6.6.6.6, 203.0.113.9" })).toEqual({ ip: "203.0.113.9", version: 4 });
    expect(await proxied.me()).toEqual({ ip: "127.0.0.1", version: 4 });
    expect((await requestLines(proxied.server, 2)).map(({ peer, client }) => ({ peer, client }))).toEqual([
      { peer: "127.0.0.1", client: "203.0.113.9" },
      { peer: "127.0.0.1", client: "127.0.0.1" },
    ]);
    const direct = await serverWithKey({ "log-level": "info" });
    expect(await direct.me({ "x-forwarded-for": "203.0.113.9" })).toEqual({ ip: "127.0.0.1", version: 4 });
    const [line] = await requestLines(direct.server, 1);
    expect(line?.peer).toBe("127.0.0.1");
    expect(line).not.toHaveProperty("client");
  });

  test("an IPv6 peer is answered as IPv6", async () => {
    const { server, me } = await serverWithKey({ host: "::1", "trust-proxy": "10.0.0.0/8" });
    const url = `http://[::1]:${server.port}`;
    expect(await me({}, url)).toEqual({ ip: "::1", version: 6 });
    expect(await me({ "x-forwarded-for": "1.2.3.4" }, url)).toEqual({ ip: "::1", version: 6 });
  });

  test("an IPv4 client of a dual-stack socket is answered as IPv4", async () => {
    const { server, me } = await serverWithKey({ host: "::" });
    expect(await me({}, `http://127.0.0.1:${server.port}`)).toEqual({ ip: "127.0.0.1", version: 4 });
  });

  test("a short Host header (a proxy's one-word upstream name) routes like any other", async () => {
    const { me } = await serverWithKey();
    for (const host of ["ip", "a", "geo:8080"]) expect(await me({ host })).toEqual({ ip: "127.0.0.1", version: 4 });
  });
});

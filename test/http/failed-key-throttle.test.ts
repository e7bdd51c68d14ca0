/**
 * CONTRACT §13: the unknown-key throttle keys on the client as /v1/me sees it (trusted
 * proxies honoured), an IPv6 client per /64. The clock stands still, so the burst of
 * FAILED_KEYS_PER_SECOND is exact.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { clientThrottleId } from "../../src/access/client-throttle-id.ts";
import { KeyCache } from "../../src/access/key-cache.ts";
import { parseCidr } from "../../src/address/cidr.ts";
import { parseAddress } from "../../src/address/parse.ts";
import { createApp, type App } from "../../src/http/app.ts";
import { FAILED_KEYS_PER_SECOND } from "../../src/http/gate.ts";
import { attachContext, RequestContext } from "../../src/http/request-context.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { defaultIndex } from "../support/default-data.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-throttle-"));
let store: SqliteStore;
let app: App;
let secret: string;
beforeAll(async () => {
  store = SqliteStore.open(join(dir, "state.db"));
  secret = (await store.createKey("good", "unlimited")).secret;
  const keys = await KeyCache.load(store);
  const index = defaultIndex();
  app = createApp({ store, keys, index: () => index, clock: { now: () => new Date("2026-11-15T12:00:00Z"), monotonicMs: () => 1_000_000 }, trustProxy: [parseCidr("10.0.0.0/8")!] });
});
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A /v1/usage request that came through a socket from `peer`, through a proxy when `forwardedFor` is set. */
async function fromPeer(peer: string, key: string, forwardedFor?: string): Promise<number> {
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (forwardedFor) headers["x-forwarded-for"] = forwardedFor;
  const request = new Request("http://iplookup.test/v1/usage", { headers });
  attachContext(request, new RequestContext("t", () => parseAddress(peer)));
  return (await app.handle(request)).status;
}

const badKey = (n: number) => `ipl_${"x".repeat(20)}${n}`;

async function guess(peer: string, count: number, forwardedFor?: string): Promise<number[]> {
  const statuses: number[] = [];
  for (let n = 0; n < count; n++) statuses.push(await fromPeer(peer, badKey(n), forwardedFor));
  return statuses;
}

test("behind a trusted proxy, one guesser is throttled and the other clients of the proxy are not", async () => {
  const guesser = await guess("10.0.0.1", FAILED_KEYS_PER_SECOND + 1, "198.51.100.7");
  expect(guesser.slice(0, FAILED_KEYS_PER_SECOND).every((status) => status === 401)).toBe(true);
  expect(guesser.at(-1)).toBe(429);
  // Another client behind the same proxy: its first unknown key is 401, not 429.
  expect(await fromPeer("10.0.0.1", badKey(99), "198.51.100.8")).toBe(401);
  // The guesser with a valid key goes on.
  expect(await fromPeer("10.0.0.1", secret, "198.51.100.7")).toBe(200);
});

test("an untrusted peer's X-Forwarded-For is not read: a guesser cannot pick a fresh bucket per request", async () => {
  const statuses: number[] = [];
  for (let n = 0; n <= FAILED_KEYS_PER_SECOND; n++) statuses.push(await fromPeer("192.0.2.50", badKey(n), `203.0.113.${n}`));
  expect(statuses.at(-1)).toBe(429);
});

test("IPv6 clients count per /64", async () => {
  const guesser = await guess("2001:db8:1:2::1", FAILED_KEYS_PER_SECOND);
  expect(guesser.every((status) => status === 401)).toBe(true);
  // Another address of the same /64 spends from the same bucket.
  expect(await fromPeer("2001:db8:1:2:ffff:ffff:ffff:ffff", badKey(50))).toBe(429);
  // The next /64 has its own.
  expect(await fromPeer("2001:db8:1:3::1", badKey(51))).toBe(401);
});

test("clientThrottleId: an IPv4 address alone, IPv6 by its /64", () => {
  const id = (text: string) => clientThrottleId(parseAddress(text)!);
  expect(id("198.51.100.7")).not.toBe(id("198.51.100.8"));
  expect(id("2001:db8::1")).toBe(id("2001:db8::ffff:1"));
  expect(id("2001:db8:0:0:8000::")).toBe(id("2001:db8::1"));
  expect(id("2001:db8:0:1::")).not.toBe(id("2001:db8::1"));
  expect(id("::ffff:198.51.100.7")).toBe(id("198.51.100.7"));
});

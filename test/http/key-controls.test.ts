import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KeyCache } from "../../src/access/key-cache.ts";
import { parseAddress } from "../../src/address/parse.ts";
import { parseCidr } from "../../src/address/cidr.ts";
import { createApp } from "../../src/http/app.ts";
import { attachContext, RequestContext } from "../../src/http/request-context.ts";
import { openStore } from "../../src/store/open-store.ts";
import type { KeyControls, Store } from "../../src/store/store.ts";
import { defaultIndex } from "../support/default-data.ts";
import { postgresAvailable, testStates } from "../support/postgres.ts";

/**
 * The key controls of CONTRACT §16 on the request path, in-process, on each store kind:
 * every refusal at its edge, the order of the checks, CORS, the preflight, rotation with a
 * grace, and that no refusal charges a unit. The app is built from its dependencies, with
 * one settable clock for the app and the store.
 */
const dir = mkdtempSync(join(tmpdir(), "iplookup-controls-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const pg = testStates();

const PEER = "198.51.100.7";
const CONTROLS: KeyControls = {
  expiresAt: "2026-12-01T00:00:00.000Z",
  allowedCidrs: ["198.51.100.0/24", "2001:db8::/32"],
  allowedOrigins: ["https://app.example.com"],
  metadata: { team: "maps" },
};

async function setUp(location: string) {
  const clock = { now: new Date("2026-11-15T12:00:00Z") };
  const store: Store = await openStore(location, { clock: () => clock.now });
  const keys = await KeyCache.load(store);
  const app = createApp({
    store,
    keys,
    index: defaultIndex,
    clock: { now: () => clock.now, monotonicMs: () => clock.now.getTime() },
    trustProxy: [parseCidr("10.0.0.0/8")!],
  });
  const send = (method: string, path: string, options: { key?: string; peer?: string; headers?: Record<string, string>; body?: unknown } = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.key) headers.authorization = `Bearer ${options.key}`;
    let body: string | undefined;
    if (options.body !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(options.body);
    }
    const request = new Request(`http://iplookup.test${path}`, { method, headers, body });
    attachContext(request, new RequestContext(undefined, () => parseAddress(options.peer ?? PEER)));
    return app.handle(request);
  };
  const lookup = (key: string, options: { peer?: string; headers?: Record<string, string> } = {}) => send("POST", "/v1/lookup", { key, body: { ip: "1.1.1.1" }, ...options });
  const used = async (keyId: string) => store.unitsUsed(keyId, "2026-11");
  const codeOf = async (response: Response) => ((await response.clone().json()) as { code?: string }).code;
  return { clock, store, keys, send, lookup, used, codeOf, close: () => store.close() };
}

function suite(fresh: () => Promise<string>) {
  test("a key with every control: answered inside them, with CORS for its origin", async () => {
    const t = await setUp(await fresh());
    const { key, secret } = await t.store.createKey("web", "free", CONTROLS);
    await t.keys.refresh();
    const ok = await t.lookup(secret, { headers: { origin: "https://app.example.com" } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
    expect(ok.headers.get("vary")).toBe("Origin");
    expect(ok.headers.get("access-control-expose-headers")).toContain("X-Units-Consumed");
    // No Origin (a server, curl): answered, with Vary but no allowance.
    const plain = await t.lookup(secret);
    expect(plain.status).toBe(200);
    expect(plain.headers.get("access-control-allow-origin")).toBeNull();
    expect(plain.headers.get("vary")).toBe("Origin");
    // /v1/me and /v1/usage carry it too.
    for (const path of ["/v1/me", "/v1/usage"]) {
      const response = await t.send("GET", path, { key: secret, headers: { origin: "https://app.example.com" } });
      expect({ path, status: response.status, allow: response.headers.get("access-control-allow-origin") }).toEqual({ path, status: 200, allow: "https://app.example.com" });
    }
    expect(await t.used(key.id)).toBe(2);
    await t.close();
  });

  test("expires_at: answered until the millisecond before, key_expired (401) from it on, never charged", async () => {
    const t = await setUp(await fresh());
    const { key, secret } = await t.store.createKey("expiring", "free", { ...CONTROLS, allowedCidrs: null, allowedOrigins: null });
    await t.keys.refresh();
    t.clock.now = new Date(Date.parse(CONTROLS.expiresAt!) - 1);
    expect((await t.lookup(secret)).status).toBe(200);
    t.clock.now = new Date(CONTROLS.expiresAt!);
    const refused = await t.lookup(secret);
    expect(refused.status).toBe(401);
    expect(refused.headers.get("content-type")).toBe("application/problem+json");
    expect(refused.headers.get("www-authenticate")).toContain('error="invalid_token"');
    expect(await refused.json()).toMatchObject({ code: "key_expired", status: 401, expired_at: CONTROLS.expiresAt });
    expect(await t.used(key.id)).toBe(1);
    await t.close();
  });

  test("allowed_cidrs: the client address as /v1/me sees it; trusted proxies honoured, an untrusted peer's header ignored", async () => {
    const t = await setUp(await fresh());
    const { key, secret } = await t.store.createKey("office", "free", { expiresAt: null, allowedCidrs: ["198.51.100.0/24", "2001:db8::/32"], allowedOrigins: null, metadata: null });
    await t.keys.refresh();
    expect((await t.lookup(secret, { peer: "198.51.100.255" })).status).toBe(200);
    expect((await t.lookup(secret, { peer: "2001:db8:ffff::1" })).status).toBe(200);
    for (const peer of ["198.51.101.0", "198.51.99.255", "2001:db9::1", "::ffff:203.0.113.1"]) {
      const refused = await t.lookup(secret, { peer });
      expect({ peer, status: refused.status, code: await t.codeOf(refused) }).toEqual({ peer, status: 403, code: "address_not_allowed" });
    }
    // Behind a trusted proxy, the forwarded client counts, both ways.
    expect((await t.lookup(secret, { peer: "10.1.2.3", headers: { "x-forwarded-for": "198.51.100.9" } })).status).toBe(200);
    expect(await t.codeOf(await t.lookup(secret, { peer: "10.1.2.3", headers: { "x-forwarded-for": "203.0.113.9" } }))).toBe("address_not_allowed");
    // An untrusted peer cannot name an allowed address.
    expect(await t.codeOf(await t.lookup(secret, { peer: "203.0.113.9", headers: { "x-forwarded-for": "198.51.100.9" } }))).toBe("address_not_allowed");
    expect(await t.used(key.id)).toBe(3);
    await t.close();
  });

  test("allowed_origins: an Origin not listed is 403 origin_not_allowed, without an allowance", async () => {
    const t = await setUp(await fresh());
    const { key, secret } = await t.store.createKey("web", "free", { expiresAt: null, allowedCidrs: null, allowedOrigins: ["https://app.example.com", "http://localhost:5173"], metadata: null });
    await t.keys.refresh();
    expect((await t.lookup(secret, { headers: { origin: "http://localhost:5173" } })).headers.get("access-control-allow-origin")).toBe("http://localhost:5173");
    for (const origin of ["https://evil.example", "http://app.example.com", "https://app.example.com:8443", "null"]) {
      const refused = await t.lookup(secret, { headers: { origin } });
      expect({ origin, status: refused.status, code: await t.codeOf(refused) }).toEqual({ origin, status: 403, code: "origin_not_allowed" });
      expect(refused.headers.get("access-control-allow-origin")).toBeNull();
    }
    expect(await t.used(key.id)).toBe(1);
    await t.close();
  });

  test("every answer to a key that lists origins says Vary: Origin, its refusals included; only a listed origin is ever allowed", async () => {
    const t = await setUp(await fresh());
    const { key, secret } = await t.store.createKey("web", "free", CONTROLS);
    await t.keys.refresh();
    const listed = { origin: "https://app.example.com" };
    const other = { origin: "https://evil.example" };
    const cors = async (response: Response) => ({
      status: response.status,
      code: await t.codeOf(response),
      vary: response.headers.get("vary"),
      allow: response.headers.get("access-control-allow-origin"),
    });
    // A shared cache must not hand the 403 to the listed origin, nor its 200 to another.
    expect(await cors(await t.lookup(secret, { headers: other }))).toEqual({ status: 403, code: "origin_not_allowed", vary: "Origin", allow: null });
    expect(await cors(await t.lookup(secret, { headers: listed }))).toMatchObject({ status: 200, vary: "Origin", allow: listed.origin });
    // The key's other refusals: Vary either way, and the listed origin may read why.
    expect(await cors(await t.lookup(secret, { peer: "203.0.113.1", headers: listed }))).toEqual({ status: 403, code: "address_not_allowed", vary: "Origin", allow: listed.origin });
    expect(await cors(await t.lookup(secret, { peer: "203.0.113.1", headers: other }))).toEqual({ status: 403, code: "address_not_allowed", vary: "Origin", allow: null });
    t.clock.now = new Date(CONTROLS.expiresAt!);
    expect(await cors(await t.lookup(secret, { headers: listed }))).toEqual({ status: 401, code: "key_expired", vary: "Origin", allow: listed.origin });
    expect(await cors(await t.lookup(secret, { headers: other }))).toEqual({ status: 401, code: "key_expired", vary: "Origin", allow: null });
    expect(await cors(await t.lookup(secret))).toEqual({ status: 401, code: "key_expired", vary: "Origin", allow: null });
    // A key that lists no origins answers the same to every Origin: nothing to say.
    const { secret: plain } = await t.store.createKey("server", "free", { ...CONTROLS, allowedOrigins: null });
    await t.keys.refresh();
    expect(await cors(await t.lookup(plain, { headers: listed }))).toEqual({ status: 401, code: "key_expired", vary: null, allow: null });
    // A secret past its grace is answered as an unknown one, with nothing about its key.
    t.clock.now = new Date("2026-11-15T12:00:00Z");
    const rotated = (await t.store.rotateKey(key.id))!;
    await t.keys.refresh();
    expect(await cors(await t.lookup(secret, { headers: listed }))).toEqual({ status: 401, code: "invalid_key", vary: null, allow: null });
    expect(await cors(await t.lookup(rotated.secret, { headers: other }))).toEqual({ status: 403, code: "origin_not_allowed", vary: "Origin", allow: null });
    expect(await t.used(key.id)).toBe(1);
    await t.close();
  });

  test("the order of checks: route, key (expiry, address, origin), rate, then the rest; no refusal charges", async () => {
    const t = await setUp(await fresh());
    const { key, secret } = await t.store.createKey("all", "free", CONTROLS);
    await t.keys.refresh();
    const bad = { peer: "203.0.113.1", headers: { origin: "https://evil.example" } };
    t.clock.now = new Date("2026-12-01T00:00:00Z");
    // An expired key from a disallowed address with a bad origin: expiry first.
    expect(await t.codeOf(await t.lookup(secret, bad))).toBe("key_expired");
    // The route before the key.
    expect(await t.codeOf(await t.send("POST", "/v1/nowhere", { key: secret, ...bad }))).toBe("not_found");
    expect(await t.codeOf(await t.send("DELETE", "/v1/lookup", { key: secret, ...bad }))).toBe("method_not_allowed");
    t.clock.now = new Date("2026-11-20T00:00:00Z");
    // Not expired: the address before the origin.
    expect(await t.codeOf(await t.lookup(secret, bad))).toBe("address_not_allowed");
    expect(await t.codeOf(await t.lookup(secret, { headers: bad.headers }))).toBe("origin_not_allowed");
    // The key's checks before the media type and the body.
    expect(await t.codeOf(await t.send("POST", "/v1/lookup", { key: secret, ...bad, headers: { ...bad.headers, "content-type": "text/plain" } }))).toBe("address_not_allowed");
    // Refusals take nothing from the rate: the free plan's 10 a second are all there.
    for (let i = 0; i < 10; i++) expect((await t.lookup(secret)).status).toBe(200);
    const limited = await t.lookup(secret, { headers: { origin: "https://app.example.com" } });
    expect(await t.codeOf(limited)).toBe("rate_limited");
    // A refusal after the key's checks still tells the browser it may read it.
    expect(limited.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
    // …while the key's checks come before the rate.
    expect(await t.codeOf(await t.lookup(secret, { headers: bad.headers }))).toBe("origin_not_allowed");
    expect(await t.used(key.id)).toBe(10);
    await t.close();
  });

  test("a CORS preflight on /v1 answers 204 without a key, charges nothing and takes nothing from any rate", async () => {
    const t = await setUp(await fresh());
    const { key, secret } = await t.store.createKey("web", "free", CONTROLS);
    await t.keys.refresh();
    for (let i = 0; i < 30; i++) {
      const response = await t.send("OPTIONS", "/v1/lookup", { headers: { origin: "https://app.example.com", "access-control-request-method": "POST", "access-control-request-headers": "authorization, content-type" } });
      expect(response.status).toBe(204);
      expect(response.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
      expect(response.headers.get("access-control-allow-methods")).toBe("POST");
      expect(response.headers.get("allow")).toBe("POST, OPTIONS");
      expect(response.headers.get("access-control-allow-headers")).toBe("Authorization, Content-Type");
      expect(response.headers.get("vary")).toContain("Origin");
    }
    expect((await t.send("OPTIONS", "/v1/usage", { headers: { origin: "https://x.example" } })).headers.get("access-control-allow-methods")).toBe("GET, HEAD");
    expect(await t.codeOf(await t.send("OPTIONS", "/v1/nowhere"))).toBe("not_found");
    // Outside /v1: not a CORS route.
    expect((await t.send("OPTIONS", "/healthz")).status).toBe(405);
    expect((await t.lookup(secret)).status).toBe(200);
    expect(await t.used(key.id)).toBe(1);
    await t.close();
  });

  test("a CORS preflight on a route with a parameter (/v1/asn/{asn}) answers as on the others", async () => {
    const t = await setUp(await fresh());
    for (const path of ["/v1/asn/13335", "/v1/asn/AS13335", "/v1/asn"]) {
      const response = await t.send("OPTIONS", path, { headers: { origin: "https://app.example.com", "access-control-request-method": "GET" } });
      expect([path, response.status]).toEqual([path, 204]);
      expect(response.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
      expect(response.headers.get("access-control-allow-methods")).toBe("GET, HEAD");
    }
    expect(await t.codeOf(await t.send("OPTIONS", "/v1/asn/13335/more"))).toBe("not_found");
    await t.close();
  });

  test("rotation with a grace: both secrets work until it ends, then only the new one; without a grace the old stops at once", async () => {
    const t = await setUp(await fresh());
    const { key, secret: first } = await t.store.createKey("rotated", "unlimited");
    await t.keys.refresh();
    const rotated = (await t.store.rotateKey(key.id, { graceMs: 86_400_000 }))!;
    expect(rotated.key.graceUntil).toBe("2026-11-16T12:00:00.000Z");
    // The new secret at once, even before the cache reloads (found in the store).
    expect((await t.lookup(rotated.secret)).status).toBe(200);
    await t.keys.refresh();
    expect((await t.lookup(first)).status).toBe(200);
    expect((await t.lookup(rotated.secret)).status).toBe(200);
    t.clock.now = new Date("2026-11-16T11:59:59.999Z");
    expect((await t.lookup(first)).status).toBe(200);
    t.clock.now = new Date("2026-11-16T12:00:00.000Z");
    const late = await t.lookup(first);
    expect(late.status).toBe(401);
    expect(await t.codeOf(late)).toBe("invalid_key");
    expect((await t.lookup(rotated.secret)).status).toBe(200);
    // A fresh cache (another worker, another host) says the same.
    const other = await KeyCache.load(t.store);
    expect(other.authenticate(first)?.secretValidUntil).toBe(Date.parse("2026-11-16T12:00:00.000Z"));
    // Rotating again without a grace: the first two secrets stop at once.
    t.clock.now = new Date("2026-11-16T11:00:00.000Z");
    const again = (await t.store.rotateKey(key.id))!;
    await t.keys.refresh();
    for (const old of [first, rotated.secret]) expect(await t.codeOf(await t.lookup(old))).toBe("invalid_key");
    expect((await t.lookup(again.secret)).status).toBe(200);
    expect(await t.used(key.id)).toBe(6);
    await t.close();
  });

  test("a change to a key's controls reaches the cache with the change counter, and clearing them lifts the checks", async () => {
    const t = await setUp(await fresh());
    const { key, secret } = await t.store.createKey("changing", "free");
    await t.keys.refresh();
    expect((await t.lookup(secret, { peer: "203.0.113.1" })).status).toBe(200);
    const before = (await t.store.generation()).count;
    await t.store.updateKey(key.id, { allowedCidrs: ["198.51.100.0/24"] });
    expect((await t.store.generation()).count).not.toBe(before);
    await t.keys.refresh();
    expect(await t.codeOf(await t.lookup(secret, { peer: "203.0.113.1" }))).toBe("address_not_allowed");
    await t.store.updateKey(key.id, { allowedCidrs: null });
    await t.keys.refresh();
    expect((await t.lookup(secret, { peer: "203.0.113.1" })).status).toBe(200);
    await t.close();
  });
}

describe("key controls on a SQLite state file", () => {
  suite(async () => join(dir, `state-${++files}.db`));
});

describe.skipIf(!postgresAvailable)("key controls on PostgreSQL", () => {
  suite(pg.fresh);
});

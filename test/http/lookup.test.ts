import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { LookupResult } from "../../src/lookup/lookup-result.ts";
import { makeTestApp, type TestApp } from "../support/test-app.ts";
import { hostingBy, NOT_HOSTING } from "../support/privacy.ts";

let t: TestApp;
let key: string;
beforeAll(async () => {
  t = await makeTestApp();
  key = (await t.issueKey("standard")).secret;
});
afterAll(() => t.close());

const lookup = (ip: string) => t.request("POST", "/v1/lookup", { key, body: { ip } });
const batch = (ips: unknown[]) => t.request("POST", "/v1/lookup/batch", { key, body: { ips } });
const used = async () => ((await (await t.request("GET", "/v1/usage", { key })).json()) as { units: { used: number } }).units.used;

describe("POST /v1/lookup", () => {
  test("answers a LookupResult with unit headers", async () => {
    const response = await lookup("1.1.1.1");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("application/json");
    expect(response.headers.get("x-units-consumed")).toBe("1");
    expect(Number(response.headers.get("x-units-remaining"))).toBeLessThan(10_000_000);
    const result = (await response.json()) as LookupResult;
    expect(result).toMatchObject({ ip: "1.1.1.1", version: 4, found: true, asn: 13335, as_name: "Cloudflare, Inc.", country_code: "AU", country: "Australia", privacy: hostingBy("Cloudflare") });
    expect(result.network).toMatch(/^1\.1\.1\.0\/2[0-9]$/);
  });

  test("IPv6 is answered with its canonical text", async () => {
    const result = (await (await lookup("2606:4700:4700:0:0:0:0:1111")).json()) as LookupResult;
    expect(result).toMatchObject({ ip: "2606:4700:4700::1111", version: 6, found: true, asn: 13335 });
  });

  test("an IPv4-mapped address is answered as its IPv4 address", async () => {
    const result = (await (await lookup("::ffff:8.8.8.8")).json()) as LookupResult;
    expect(result).toMatchObject({ ip: "8.8.8.8", version: 4, asn: 15169 });
  });

  test("a bad address answers the batch shape with one entry at index 0", async () => {
    const body = (await (await lookup("192.168.1.1")).json()) as { code: string; errors: unknown[] };
    expect(body.code).toBe("address_not_public");
    expect(body.errors).toEqual([{ index: 0, value: "192.168.1.1", code: "address_not_public", reason: "private-use" }]);
    const invalid = (await (await lookup("127.1")).json()) as { code: string; errors: unknown[] };
    expect(invalid.errors).toEqual([{ index: 0, value: "127.1", code: "invalid_address" }]);
  });

  test("every key of a LookupResult is present, null where unknown", async () => {
    const result = (await (await lookup("1.1.1.1")).json()) as Record<string, unknown>;
    expect(Object.keys(result)).toEqual(["ip", "version", "found", "network", "asn", "as_name", "country_code", "country", "privacy"]);
    expect(Object.keys(result.privacy as object)).toEqual(["hosting", "tor", "vpn", "relay", "proxy", "service"]);
  });
});

describe("POST /v1/lookup/batch (SPEC §4.2)", () => {
  test("rule 1: N entries consume N units", async () => {
    const before = await used();
    const response = await batch(["1.1.1.1", "8.8.8.8", "2001:4860:4860::8888"]);
    expect(response.status).toBe(200);
    expect(response.headers.get("x-units-consumed")).toBe("3");
    expect(await used()).toBe(before + 3);
  });

  test("results keep the order and length of ips", async () => {
    const ips = ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "9.9.9.9"];
    const { results } = (await (await batch(ips)).json()) as { results: LookupResult[] };
    expect(results.map((r) => r.ip)).toEqual(ips);
  });

  test("rule 2: a duplicate appears twice and is counted twice", async () => {
    const before = await used();
    const { results } = (await (await batch(["1.1.1.1", "1.1.1.1"])).json()) as { results: LookupResult[] };
    expect(results).toHaveLength(2);
    expect(results[0]).toEqual(results[1]!);
    expect(await used()).toBe(before + 2);
  });

  test("rule 3: any bad entry rejects the whole request, listing every bad entry", async () => {
    const before = await used();
    const response = await batch(["1.1.1.1", "10.0.0.1", "example.com", "8.8.8.8", "::1"]);
    expect(response.status).toBe(400);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body.code).toBe("address_not_public");
    expect(body.results).toBeUndefined();
    expect(body.errors).toEqual([
      { index: 1, value: "10.0.0.1", code: "address_not_public", reason: "private-use" },
      { index: 2, value: "example.com", code: "invalid_address" },
      { index: 4, value: "::1", code: "address_not_public", reason: "loopback" },
    ]);
    expect(body.detail).toBe("3 of 5 entries are not supported public addresses");
    expect(await used()).toBe(before);
  });

  test("one bad entry of several is named in the singular", async () => {
    const body = (await (await batch(["1.1.1.1", "10.0.0.1", "8.8.8.8"])).json()) as { detail: string };
    expect(body.detail).toBe("1 of 3 entries is not a supported public address");
  });

  test("the top-level code is that of the first bad entry", async () => {
    const body = (await (await batch(["1.1.1.1", "1.2.3", "10.0.0.1"])).json()) as { code: string };
    expect(body.code).toBe("invalid_address");
  });

  test("rule 4: empty ips does not meet the rule of at least one entry", async () => {
    const response = await batch([]);
    expect(response.status).toBe(400);
    expect(((await response.json()) as { code: string }).code).toBe("invalid_request");
  });

  test("on a socket, an answer too large for Bun's cork buffer goes as a stream (chunked), a small one with its length", async () => {
    const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (request) => t.app.handle(request) });
    try {
      const post = (ips: string[]) =>
        fetch(`${server.url}v1/lookup/batch`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ ips }) });
      const before = await used();
      const small = await post(["1.1.1.1", "8.8.8.8"]);
      expect(small.status).toBe(200);
      expect(small.headers.get("content-length")).toBe(String((await small.arrayBuffer()).byteLength));
      const ips = Array.from({ length: 120 }, (_, i) => `8.8.${i}.8`);
      const large = await post(ips);
      expect(large.status).toBe(200);
      expect(large.headers.get("x-units-consumed")).toBe("120");
      expect(large.headers.get("content-length")).toBeNull();
      expect(large.headers.get("transfer-encoding")).toBe("chunked");
      const text = await large.text();
      expect(text.length).toBeGreaterThan(16 * 1024);
      expect((JSON.parse(text) as { results: { ip: string }[] }).results.map((result) => result.ip)).toEqual(ips);
      expect(await used()).toBe(before + 122);
    } finally {
      await server.stop(true);
    }
  });

  test("an address without data is found: false with null fields, and still costs a unit", async () => {
    // 2c0f:ffff:ffff::1 is public but covered by no row of either source file.
    const before = await used();
    const result = (await (await lookup("2c0f:ffff:ffff::1")).json()) as LookupResult;
    // The hosting list is a source of hosting: an address no AS covers is not hosting (false, not null).
    expect(result).toEqual({ ip: "2c0f:ffff:ffff::1", version: 6, found: false, network: null, asn: null, as_name: null, country_code: null, country: null, privacy: NOT_HOSTING });
    expect(await used()).toBe(before + 1);
  });
});

describe("GET /v1/usage", () => {
  test("answers the contract's shape for the key's plan and period", async () => {
    const response = await t.request("GET", "/v1/usage", { key });
    expect(response.status).toBe(200);
    const body = (await response.json()) as Record<string, any>;
    expect(body.key.name).toBe("test");
    expect(body.key.id).toMatch(/^key_/);
    expect(body.plan).toEqual({ name: "standard", max_batch_size: 1000, monthly_units: 10_000_000, rate_limit: 100 });
    expect(body.period).toEqual({ start: "2026-11-01T00:00:00Z", end: "2026-12-01T00:00:00Z" });
    expect(body.units.limit).toBe(10_000_000);
    expect(body.units.used + body.units.remaining).toBe(10_000_000);
    expect(response.headers.get("x-units-consumed")).toBeNull();
  });

  test("a new month starts from zero", async () => {
    const k = (await t.issueKey("free")).secret;
    await t.request("POST", "/v1/lookup", { key: k, body: { ip: "1.1.1.1" } });
    const saved = t.clock;
    t.clock = new Date("2026-12-01T00:00:00Z");
    try {
      const body = (await (await t.request("GET", "/v1/usage", { key: k })).json()) as Record<string, any>;
      expect(body.period.start).toBe("2026-12-01T00:00:00Z");
      expect(body.units).toEqual({ used: 0, limit: 100_000, remaining: 100_000 });
    } finally {
      t.clock = saved;
    }
  });

  test("an unlimited plan has null limits", async () => {
    const k = (await t.issueKey("unlimited")).secret;
    const response = await t.request("POST", "/v1/lookup", { key: k, body: { ip: "1.1.1.1" } });
    expect(response.headers.get("x-units-remaining")).toBeNull();
    const body = (await (await t.request("GET", "/v1/usage", { key: k })).json()) as Record<string, any>;
    expect(body.plan.monthly_units).toBeNull();
    expect(body.plan.rate_limit).toBeNull();
    expect(body.units).toEqual({ used: 1, limit: null, remaining: null });
  });
});

describe("keys on a running app", () => {
  test("a revoked key is refused after the cache refreshes", async () => {
    const issued = await t.issueKey("free");
    expect((await t.request("GET", "/v1/usage", { key: issued.secret })).status).toBe(200);
    await t.store.revokeKey(issued.key.id);
    await t.keys.refresh();
    expect((await t.request("GET", "/v1/usage", { key: issued.secret })).status).toBe(401);
  });

  test("a rotated key answers only to its new secret, with its usage kept", async () => {
    const issued = await t.issueKey("free");
    await t.request("POST", "/v1/lookup", { key: issued.secret, body: { ip: "1.1.1.1" } });
    const rotated = (await t.store.rotateKey(issued.key.id))!;
    await t.keys.refresh();
    expect((await t.request("GET", "/v1/usage", { key: issued.secret })).status).toBe(401);
    const body = (await (await t.request("GET", "/v1/usage", { key: rotated.secret })).json()) as Record<string, any>;
    expect(body.units.used).toBe(1);
  });

  test("a plan change applies to its keys", async () => {
    await t.store.setPlan("growing", { maxBatchSize: 2, monthlyUnits: 100, rateLimit: null });
    const k = (await t.issueKey("growing")).secret;
    expect((await batch3(k)).status).toBe(413);
    await t.store.setPlan("growing", { maxBatchSize: 3 });
    await t.keys.refresh();
    expect((await batch3(k)).status).toBe(200);
  });
});

function batch3(k: string) {
  return t.request("POST", "/v1/lookup/batch", { key: k, body: { ips: ["1.1.1.1", "8.8.8.8", "9.9.9.9"] } });
}

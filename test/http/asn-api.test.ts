import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import fc from "fast-check";
import { asnIndexOf } from "../../src/asn/asn-index.ts";
import { SPECIAL_ASN_RANGES } from "../../src/asn/special-purpose-asn.ts";
import { PUBLIC_ROUTES } from "../../src/http/routes.ts";
import { AsnResultSchema, AsnSearchSchema } from "../../src/http/schemas.ts";
import { defaultIndex } from "../support/default-data.ts";
import { startSocketServer, type SocketServer } from "../support/in-process-server.ts";
import { makeTestApp, type TestApp } from "../support/test-app.ts";

/** GET /v1/asn/{asn} and GET /v1/asn?q= through the whole app (CONTRACT §14, §3, §4). */

let t: TestApp;
let key: string;
beforeAll(async () => {
  t = await makeTestApp();
  key = (await t.issueKey("unlimited")).secret;
});
afterAll(() => t.close());

const get = (path: string, secret = key) => t.request("GET", path, { key: secret });
const unitsUsed = async (secret = key) => ((await (await get("/v1/usage", secret)).json()) as { units: { used: number } }).units.used;

describe("GET /v1/asn/{asn}", () => {
  test("AS13335: the AS index's answer, 1 unit, with the lookup headers", async () => {
    const before = await unitsUsed();
    const response = await get("/v1/asn/AS13335");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(response.headers.get("x-units-consumed")).toBe("1");
    expect(response.headers.get("x-units-remaining")).toBeNull(); // unlimited plan
    expect(response.headers.get("x-data-version")).toBe(defaultIndex().info.dataVersion);
    const body = (await response.json()) as { prefixes: string[] };
    expect(Value.Check(AsnResultSchema, body)).toBe(true);
    expect(body).toEqual(JSON.parse(JSON.stringify(asnIndexOf(defaultIndex()).result(13335))));
    expect(body).toMatchObject({ asn: 13335, found: true, name: "Cloudflare, Inc.", country_code: "US", country: "United States", hosting: true });
    expect(body.prefixes).toContain("1.1.1.0/24");
    expect(await unitsUsed()).toBe(before + 1);
  });

  test("13335, AS13335, as13335 and As13335 are the same AS", async () => {
    const bodies = await Promise.all(["13335", "AS13335", "as13335", "As13335", "aS13335"].map(async (form) => (await get(`/v1/asn/${form}`)).text()));
    expect(new Set(bodies).size).toBe(1);
  });

  test("an AS the data does not know: 200, found false, null fields, empty lists, 1 unit", async () => {
    const before = await unitsUsed();
    const response = await get("/v1/asn/4199999999");
    expect(response.status).toBe(200);
    expect(response.headers.get("x-units-consumed")).toBe("1");
    expect(await response.json()).toEqual({ asn: 4199999999, found: false, name: null, country_code: null, country: null, hosting: null, num_ips: 0, prefixes: [], prefixes6: [] });
    expect(await unitsUsed()).toBe(before + 1);
  });

  test.each(["%zz", "AS%E2%82", "%", "AS13335%"])("%s (not valid percent-encoding): 400 invalid_asn, never 500, no unit", async (text) => {
    const before = await unitsUsed();
    const response = await get(`/v1/asn/${text}`);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: "invalid_asn" });
    expect(await unitsUsed()).toBe(before);
  });

  test("percent-encoding is decoded: %41S13335 is AS13335", async () => {
    expect(await (await get("/v1/asn/%41S13335")).text()).toBe(await (await get("/v1/asn/AS13335")).text());
  });

  test.each(["AS", "ASN13335", "AS 13335", "AS%2013335", "%2013335", "+13335", "-1", "013335", "AS013335", "00", "13335.0", "0x3417", "1e5", "4294967296", "99999999999", "AS-13335", "13335AS", "%E2%80%8B13335", "١٣٣٣٥"])(
    "%s: 400 invalid_asn, no unit",
    async (text) => {
      const before = await unitsUsed();
      const response = await get(`/v1/asn/${text}`);
      expect(response.status).toBe(400);
      expect(response.headers.get("content-type")).toBe("application/problem+json");
      const problem = (await response.json()) as { code: string; status: number; type: string; detail: string };
      expect(problem).toMatchObject({ type: "about:blank", status: 400, code: "invalid_asn" });
      expect(response.headers.get("x-units-consumed")).toBeNull();
      expect(await unitsUsed()).toBe(before);
    },
  );

  // Each range's edges, inside and just outside.
  const special = SPECIAL_ASN_RANGES.filter((range) => !range.public).flatMap((range) => [
    [range.first, range.reason],
    [range.last, range.reason],
  ]) as [number, string][];
  test.each(special)("AS%d: 400 asn_not_public (%s), no unit", async (asn, reason) => {
    const before = await unitsUsed();
    const response = await get(`/v1/asn/AS${asn}`);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ status: 400, code: "asn_not_public", reason });
    expect(await unitsUsed()).toBe(before);
  });

  test.each([1, 111, 113, 23455, 23457, 64495, 131072, 4199999999])("AS%d, next to a special-purpose range, is public: 200", async (asn) => {
    expect((await get(`/v1/asn/${asn}`)).status).toBe(200);
  });

  test("AS112 (the AS112 project, a row of the registry that is routed publicly) is answered", async () => {
    const body = (await (await get("/v1/asn/112")).json()) as { found: boolean; prefixes: string[]; prefixes6: string[] };
    expect(body.found).toBe(true);
    expect(body.prefixes).toContain("192.175.48.0/24");
    expect(body.prefixes6).toContain("2620:4f:8000::/48");
  });

  test("a private-use AS present in the data is still refused (CONTRACT §14)", async () => {
    expect(asnIndexOf(defaultIndex()).slotOf(65002)).toBeGreaterThanOrEqual(0);
    expect(await (await get("/v1/asn/65002")).json()).toMatchObject({ code: "asn_not_public", reason: "private-use" });
  });

  test("HEAD answers GET's status and headers without a body, and costs what GET costs", async () => {
    const before = await unitsUsed();
    const head = await t.request("HEAD", "/v1/asn/13335", { key });
    expect(head.status).toBe(200);
    expect(head.headers.get("x-units-consumed")).toBe("1");
    expect(await head.text()).toBe("");
    expect(await unitsUsed()).toBe(before + 1);
  });
});

describe("GET /v1/asn?q=", () => {
  test("cloudflare: the Cloudflare ASes, most addresses first, 1 unit", async () => {
    const before = await unitsUsed();
    const response = await get("/v1/asn?q=CloudFlare");
    expect(response.status).toBe(200);
    expect(response.headers.get("x-units-consumed")).toBe("1");
    const body = (await response.json()) as { results: { asn: number; name: string; country_code: string | null; num_ips: number }[] };
    expect(Value.Check(AsnSearchSchema, body)).toBe(true);
    expect(body.results[0]).toEqual({ asn: 13335, name: "Cloudflare, Inc.", country_code: "US", num_ips: asnIndexOf(defaultIndex()).result(13335).num_ips });
    for (const entry of body.results) expect(entry.name.toLowerCase()).toContain("cloudflare");
    const sizes = body.results.map((entry) => entry.num_ips);
    expect(sizes).toEqual([...sizes].sort((a, b) => b - a));
    expect(await unitsUsed()).toBe(before + 1);
  });

  test("a number's start finds the ASes it begins, AS before it too", async () => {
    const plain = (await (await get("/v1/asn?q=13335")).json()) as { results: { asn: number }[] };
    const prefixed = (await (await get("/v1/asn?q=AS13335")).json()) as { results: { asn: number }[] };
    expect(plain.results.map((entry) => entry.asn)).toContain(13335);
    for (const entry of plain.results) expect(String(entry.asn).startsWith("13335")).toBe(true);
    expect(prefixed).toEqual(plain);
  });

  test("a text most names contain: exactly 50", async () => {
    const body = (await (await get("/v1/asn?q=a")).json()) as { results: unknown[] };
    expect(body.results).toHaveLength(50);
  });

  test.each([
    ["%zz", "q=%zz"],
    ["a lone %", "q=cloud%"],
    ["a cut escape", "q=cloud%2"],
    ["truncated UTF-8", "q=%E2%82"],
    ["an encoded surrogate", "q=%ED%A0%80"],
    ["an overlong form", "q=%C0%AF"],
    ["a second q", "q=cloud&q=%zz"],
  ])("bad percent-encoding in q (%s): 400 invalid_request saying so, no unit", async (_, query) => {
    const before = await unitsUsed();
    const response = await get(`/v1/asn?${query}`);
    expect(response.status).toBe(400);
    expect(response.headers.get("content-type")).toBe("application/problem+json");
    const part = query.split("&").at(-1)!;
    expect(await response.json()).toMatchObject({ status: 400, code: "invalid_request", detail: `the query "${part}" is not valid percent-encoding (UTF-8)` });
    expect(await unitsUsed()).toBe(before);
  });

  test("q in good percent-encoding is searched as it decodes: %41S13335 is AS13335, + a space; %00 decodes (to a NUL no name holds)", async () => {
    expect(await (await get("/v1/asn?q=%41S13335")).text()).toBe(await (await get("/v1/asn?q=AS13335")).text());
    expect(await (await get("/v1/asn?q=cloudflare+inc")).text()).toBe(await (await get("/v1/asn?q=cloudflare%20inc")).text());
    const nul = await get("/v1/asn?q=%00");
    expect(nul.status).toBe(200);
    expect(await nul.json()).toEqual({ results: [] });
  });

  test("nothing found: an empty list, still 1 unit", async () => {
    const response = await get("/v1/asn?q=zzzzqqqqxxxx");
    expect(response.status).toBe(200);
    expect(response.headers.get("x-units-consumed")).toBe("1");
    expect(await response.json()).toEqual({ results: [] });
  });

  test("a bad search text's detail names q, the parameter the caller gave", async () => {
    const response = await get("/v1/asn?q=");
    expect(await response.json()).toMatchObject({ code: "invalid_request", detail: "q: the search text has 0 characters; it must have 1 to 64" });
    expect(await (await get("/v1/asn?q=a&q=b")).json()).toMatchObject({ code: "invalid_request", detail: "give q once" });
  });

  test("64 characters are fine (counted as characters, not bytes); 65 are not", async () => {
    expect((await get(`/v1/asn?q=${"x".repeat(64)}`)).status).toBe(200);
    expect((await get(`/v1/asn?q=${encodeURIComponent("é".repeat(64))}`)).status).toBe(200);
    expect((await get(`/v1/asn?q=${encodeURIComponent("😀".repeat(64))}`)).status).toBe(200);
  });

  test.each([
    ["no q", "/v1/asn"],
    ["an empty q", "/v1/asn?q="],
    ["65 characters", `/v1/asn?q=${"x".repeat(65)}`],
    ["65 non-ASCII characters", `/v1/asn?q=${encodeURIComponent("é".repeat(65))}`],
    ["another parameter", "/v1/asn?q=cloud&limit=5"],
    ["q twice", "/v1/asn?q=cloud&q=flare"],
    ["q twice, once empty", "/v1/asn?q=cloud&q="],
  ])("%s: 400 invalid_request, no unit", async (_, path) => {
    const before = await unitsUsed();
    const response = await get(path);
    expect(response.status).toBe(400);
    expect(response.headers.get("content-type")).toBe("application/problem+json");
    expect(await response.json()).toMatchObject({ code: "invalid_request" });
    expect(await unitsUsed()).toBe(before);
  });
});

describe("the gate, rate and quota on the AS routes", () => {
  test.each(["/v1/asn/13335", "/v1/asn?q=cloud"])("%s without a key: 401 missing_key; with a wrong one: 401 invalid_key", async (path) => {
    const missing = await t.request("GET", path);
    expect(missing.status).toBe(401);
    expect(await missing.json()).toMatchObject({ code: "missing_key" });
    expect(missing.headers.get("www-authenticate")).toContain("Bearer");
    const wrong = await get(path, "ipl_wrongwrongwrongwrongwrongwrong");
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toMatchObject({ code: "invalid_key" });
  });

  test("a key comes before the AS number: an invalid AS without a key is 401", async () => {
    expect((await t.request("GET", "/v1/asn/nonsense")).status).toBe(401);
  });

  test("wrong method: 405 with Allow; a path below the AS: 404", async () => {
    const post = await t.request("POST", "/v1/asn/13335", { key, body: {} });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
    expect((await get("/v1/asn/13335/prefixes")).status).toBe(404);
    expect((await get("/v1/asn/")).status).toBe(404);
  });

  test("the rate limit counts AS requests (free: 10 a second, a burst of 10)", async () => {
    const { secret } = await t.issueKey("free", "rate");
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) statuses.push((await get(i % 2 === 0 ? "/v1/asn/13335" : "/v1/asn?q=cloud", secret)).status);
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(200));
    expect(statuses[10]).toBe(429);
    // The clock moves on: the bucket refills.
    t.clock = new Date(t.clock.getTime() + 1000);
    expect((await get("/v1/asn/13335", secret)).status).toBe(200);
  });

  test("the quota: a request that does not fit is 429 quota_exceeded and costs nothing; a refused AS number costs nothing either", async () => {
    await t.store.setPlan("two", { maxBatchSize: 10, monthlyUnits: 2, rateLimit: null });
    const { secret } = await t.issueKey("two", "quota");
    const first = await get("/v1/asn/13335", secret);
    expect(first.headers.get("x-units-remaining")).toBe("1");
    expect((await get("/v1/asn/64512", secret)).status).toBe(400);
    const second = await get("/v1/asn?q=cloud", secret);
    expect(second.headers.get("x-units-remaining")).toBe("0");
    const third = await get("/v1/asn/13335", secret);
    expect(third.status).toBe(429);
    expect(await third.json()).toMatchObject({ code: "quota_exceeded" });
    expect(await unitsUsed(secret)).toBe(2);
  });
});

test("any path segment and any q: never a 500; a unit exactly when the answer is 200", async () => {
  const segment = fc.oneof(
    fc.string({ maxLength: 24 }).map(encodeURIComponent),
    fc.stringMatching(/^(?:[Aa][Ss])?[0-9%A-Fa-f+\-. ]{1,14}$/),
    fc.bigInt({ min: 0n, max: 1n << 33n }).map((n) => `AS${n}`),
  );
  await fc.assert(
    fc.asyncProperty(segment, fc.string({ maxLength: 80 }), async (asn, q) => {
      for (const path of [`/v1/asn/${asn}`, `/v1/asn?q=${encodeURIComponent(q)}`]) {
        const before = await unitsUsed();
        const response = await get(path);
        expect({ path, known: [200, 400, 404].includes(response.status) }).toEqual({ path, known: true });
        await response.arrayBuffer();
        expect({ path, charged: (await unitsUsed()) - before }).toEqual({ path, charged: response.status === 200 ? 1 : 0 });
      }
    }),
    { numRuns: 150 },
  );
});

test("the app's routes are exactly PUBLIC_ROUTES, the AS routes included", () => {
  const paths = new Set(t.app.routes.map((route) => route.path));
  expect(paths).toEqual(new Set(PUBLIC_ROUTES));
});

describe("on a real socket", () => {
  let server: SocketServer;
  beforeAll(async () => {
    server = await startSocketServer({ "log-level": "info" });
  });
  afterAll(() => server.close());

  test("an answer as in-process, counted in /metrics under its route pattern, logged under it", async () => {
    const { SqliteStore } = await import("../../src/store/sqlite-store.ts");
    const store = SqliteStore.open(server.statePath);
    const { secret } = await store.createKey("socket", "free");
    await store.close();
    const response = await fetch(`${server.url}v1/asn/AS2500`, { headers: { authorization: `Bearer ${secret}` } });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-units-remaining")).toBe("99999");
    expect(response.headers.get("x-request-id")).not.toBeNull();
    expect(await response.json()).toEqual(JSON.parse(JSON.stringify(asnIndexOf(defaultIndex()).result(2500))));
    expect((await fetch(`${server.url}v1/asn?q=wide`, { headers: { authorization: `Bearer ${secret}` } })).status).toBe(200);
    const metrics = await (await fetch(`${server.url}metrics`)).text();
    expect(metrics).toContain('iplookup_http_requests_total{route="/v1/asn/:asn",method="GET",status="200"} 1');
    expect(metrics).toContain('iplookup_http_requests_total{route="/v1/asn",method="GET",status="200"} 1');
    expect(server.logs.join("\n")).toContain("/v1/asn/:asn");
  });
});

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { makeTestApp, type TestApp } from "../support/test-app.ts";

let t: TestApp;
let key: string;
beforeAll(async () => {
  t = await makeTestApp({ maxBody: 64 * 1024 });
  // The free plan's batch limit without its rate limit: the clock stands still in these tests.
  await t.store.setPlan("free-unthrottled", { maxBatchSize: 100, monthlyUnits: 100_000, rateLimit: null });
  key = (await t.issueKey("free-unthrottled")).secret;
});
afterAll(() => t.close());

async function problem(response: Response) {
  expect(response.headers.get("content-type")).toBe("application/problem+json");
  const body = (await response.json()) as Record<string, unknown>;
  expect(body.type).toBe("about:blank");
  expect(body.status).toBe(response.status);
  expect(typeof body.title).toBe("string");
  expect(typeof body.detail).toBe("string");
  return body;
}

async function unitsUsed(): Promise<number> {
  const response = await t.request("GET", "/v1/usage", { key });
  return ((await response.json()) as { units: { used: number } }).units.used;
}

/** Every row of the contract's error table, each checked to cost nothing. */
describe("error table", () => {
  const rows: Array<[string, () => Promise<Response>, number, string]> = [
    ["invalid_json", () => t.request("POST", "/v1/lookup", { key, body: "{not json" }), 400, "invalid_json"],
    ["invalid_json (empty body)", () => t.request("POST", "/v1/lookup", { key, body: "" , headers: { "content-type": "application/json" } }), 400, "invalid_json"],
    // An address with a stray byte: replaced by U+FFFD it would be an invalid_address.
    ["invalid_json (not UTF-8)", () => t.app.handle(new Request("http://iplookup.test/v1/lookup", { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: new Uint8Array([...Buffer.from('{"ip":"1.1.1.1'), 0xff, ...Buffer.from('"}')]) })), 400, "invalid_json"],
    ["invalid_request (missing field)", () => t.request("POST", "/v1/lookup", { key, body: {} }), 400, "invalid_request"],
    ["invalid_request (extra field)", () => t.request("POST", "/v1/lookup", { key, body: { ip: "1.1.1.1", extra: 1 } }), 400, "invalid_request"],
    ["invalid_request (wrong type)", () => t.request("POST", "/v1/lookup", { key, body: { ip: 16843009 } }), 400, "invalid_request"],
    ["invalid_request (not an object)", () => t.request("POST", "/v1/lookup", { key, body: ["1.1.1.1"] }), 400, "invalid_request"],
    ["invalid_request (empty ips)", () => t.request("POST", "/v1/lookup/batch", { key, body: { ips: [] } }), 400, "invalid_request"],
    ["invalid_request (ips entry not a string)", () => t.request("POST", "/v1/lookup/batch", { key, body: { ips: ["1.1.1.1", null] } }), 400, "invalid_request"],
    ["invalid_address", () => t.request("POST", "/v1/lookup", { key, body: { ip: "example.com" } }), 400, "invalid_address"],
    ["address_not_public", () => t.request("POST", "/v1/lookup", { key, body: { ip: "10.0.0.1" } }), 400, "address_not_public"],
    ["missing_key", () => t.request("POST", "/v1/lookup", { body: { ip: "1.1.1.1" } }), 401, "missing_key"],
    ["missing_key (other scheme)", () => t.request("GET", "/v1/me", { headers: { authorization: `Basic ${key}` } }), 401, "missing_key"],
    ["invalid_key", () => t.request("POST", "/v1/lookup", { key: "ipl_nope", body: { ip: "1.1.1.1" } }), 401, "invalid_key"],
    ["not_found", () => t.request("GET", "/v1/nothing", { key }), 404, "not_found"],
    ["not_found (trailing slash)", () => t.request("POST", "/v1/lookup/", { key, body: { ip: "1.1.1.1" } }), 404, "not_found"],
    ["method_not_allowed", () => t.request("GET", "/v1/lookup", { key }), 405, "method_not_allowed"],
    ["batch_too_large", () => t.request("POST", "/v1/lookup/batch", { key, body: { ips: Array(101).fill("1.1.1.1") } }), 413, "batch_too_large"],
    ["payload_too_large", () => t.request("POST", "/v1/lookup/batch", { key, body: { ips: Array(10_000).fill("1.1.1.1") } }), 413, "payload_too_large"],
    ["unsupported_media_type", () => t.request("POST", "/v1/lookup", { key, body: '{"ip":"1.1.1.1"}', headers: { "content-type": "text/plain" } }), 415, "unsupported_media_type"],
    ["unsupported_media_type (charset)", () => t.request("POST", "/v1/lookup", { key, body: '{"ip":"1.1.1.1"}', headers: { "content-type": "application/json; charset=latin1" } }), 415, "unsupported_media_type"],
  ];
  for (const [name, send, status, code] of rows) {
    test(name, async () => {
      const before = await unitsUsed();
      const response = await send();
      expect(response.status).toBe(status);
      expect((await problem(response)).code).toBe(code);
      expect(await unitsUsed()).toBe(before);
    });
  }

  test("missing_key carries WWW-Authenticate with the realm", async () => {
    const response = await t.request("GET", "/v1/me");
    expect(response.headers.get("www-authenticate")).toBe('Bearer realm="iplookup"');
  });

  test("invalid_key carries error=invalid_token", async () => {
    const response = await t.request("GET", "/v1/usage", { key: "ipl_wrong" });
    expect(response.headers.get("www-authenticate")).toContain('error="invalid_token"');
  });

  test("method_not_allowed names the allowed methods", async () => {
    const response = await t.request("DELETE", "/v1/lookup/batch", { key });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("POST, OPTIONS");
    expect((await t.request("POST", "/v1/me", { key, body: {} })).headers.get("allow")).toBe("GET, HEAD, OPTIONS");
  });

  // RFC 9110 §15.5.6: a 405's Allow lists the methods the resource answers. On /v1 that
  // includes OPTIONS, which the CORS preflight answers (CONTRACT §16); elsewhere it does not.
  test("a 405's Allow lists every method the route answers, and none it does not", async () => {
    const paths = ["/v1/lookup", "/v1/lookup/batch", "/v1/me", "/v1/usage", "/v1/asn", "/v1/asn/13335", "/healthz", "/readyz", "/metrics", "/openapi.json", "/docs"];
    for (const path of paths) {
      const refused = await t.request("DELETE", path, { key });
      expect([path, refused.status]).toEqual([path, 405]);
      const allow = refused.headers.get("allow")!.split(", ");
      expect([path, allow.includes("OPTIONS")]).toEqual([path, path.startsWith("/v1/")]);
      for (const method of allow) {
        const answered = await t.request(method, path, { key, body: method === "POST" ? {} : undefined });
        expect([path, method, answered.status]).not.toEqual([path, method, 405]);
      }
      expect([path, (await t.request("OPTIONS", path)).status === 405]).toEqual([path, !allow.includes("OPTIONS")]);
    }
  });

  test("a plain OPTIONS on a /v1 route (no Origin, no key) answers 204 with Allow, and grants no origin", async () => {
    const response = await t.request("OPTIONS", "/v1/lookup");
    expect(response.status).toBe(204);
    expect(response.headers.get("allow")).toBe("POST, OPTIONS");
    expect(response.headers.get("access-control-allow-origin")).toBeNull();
    expect((await t.request("OPTIONS", "/v1/asn/13335")).headers.get("allow")).toBe("GET, HEAD, OPTIONS");
  });

  test("batch_too_large carries the plan's max_batch_size", async () => {
    const body = await problem(await t.request("POST", "/v1/lookup/batch", { key, body: { ips: Array(101).fill("1.1.1.1") } }));
    expect(body.max_batch_size).toBe(100);
  });

  test("a chunked body over the limit is cut off with payload_too_large", async () => {
    const chunk = new TextEncoder().encode(`{"ips":[${'"1.1.1.1",'.repeat(10_000)}"1.1.1.1"]}`);
    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue(chunk);
        controller.close();
      },
    });
    const response = await t.app.handle(
      new Request("http://iplookup.test/v1/lookup/batch", {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: stream,
      }),
    );
    expect(response.status).toBe(413);
    expect((await problem(response)).code).toBe("payload_too_large");
  });

  test("/healthz and /readyz need no key", async () => {
    expect((await t.request("GET", "/healthz")).status).toBe(200);
    expect((await t.request("GET", "/readyz")).status).toBe(200);
  });
});

describe("check order", () => {
  test("route before key", async () => {
    expect((await problem(await t.request("GET", "/v2/lookup"))).code).toBe("not_found");
    expect((await problem(await t.request("PUT", "/v1/lookup"))).code).toBe("method_not_allowed");
  });

  test("key before media type and body", async () => {
    const response = await t.request("POST", "/v1/lookup", { body: "{bad", headers: { "content-type": "text/plain" } });
    expect((await problem(response)).code).toBe("missing_key");
  });

  test("media type before body", async () => {
    const response = await t.request("POST", "/v1/lookup", { key, body: "{bad", headers: { "content-type": "text/plain" } });
    expect((await problem(response)).code).toBe("unsupported_media_type");
  });

  test("size before JSON", async () => {
    const response = await t.request("POST", "/v1/lookup", { key, body: `{bad${" ".repeat(70_000)}` });
    expect((await problem(response)).code).toBe("payload_too_large");
  });

  test("JSON before shape, shape before batch size", async () => {
    expect((await problem(await t.request("POST", "/v1/lookup/batch", { key, body: "[" }))).code).toBe("invalid_json");
    const wrongShape = await t.request("POST", "/v1/lookup/batch", { key, body: { ips: [...Array(200).fill("1.1.1.1"), 7] } });
    expect((await problem(wrongShape)).code).toBe("invalid_request");
  });

  test("batch size before addresses", async () => {
    const response = await t.request("POST", "/v1/lookup/batch", { key, body: { ips: Array(101).fill("nope") } });
    expect((await problem(response)).code).toBe("batch_too_large");
  });

  test("addresses before quota", async () => {
    const tiny = await makeTestApp();
    try {
      await tiny.store.setPlan("tiny", { maxBatchSize: 10, monthlyUnits: 1, rateLimit: null });
      const k = (await tiny.issueKey("tiny")).secret;
      expect((await tiny.request("POST", "/v1/lookup", { key: k, body: { ip: "1.1.1.1" } })).status).toBe(200);
      const bad = await tiny.request("POST", "/v1/lookup", { key: k, body: { ip: "10.1.1.1" } });
      expect((await problem(bad)).code).toBe("address_not_public");
      const over = await tiny.request("POST", "/v1/lookup", { key: k, body: { ip: "1.1.1.1" } });
      expect(over.status).toBe(429);
      expect((await problem(over)).code).toBe("quota_exceeded");
    } finally {
      await tiny.close();
    }
  });
});

test("quota_exceeded names the period's end as /v1/usage and the contract write it (whole seconds)", async () => {
  const tiny = await makeTestApp();
  try {
    await tiny.store.setPlan("tiny", { maxBatchSize: 10, monthlyUnits: 1, rateLimit: null });
    const k = (await tiny.issueKey("tiny")).secret;
    const over = await tiny.request("POST", "/v1/lookup/batch", { key: k, body: { ips: ["1.1.1.1", "8.8.8.8"] } });
    expect(over.status).toBe(429);
    const body = await problem(over);
    expect(body).toMatchObject({ code: "quota_exceeded", units_requested: 2, units_remaining: 1, period_end: "2026-12-01T00:00:00Z" });
    expect(body.detail).toBe("this request needs 2 units; the key has 1 left until 2026-12-01T00:00:00Z");
    const usage = (await (await tiny.request("GET", "/v1/usage", { key: k })).json()) as { period: { end: string } };
    expect(usage.period.end).toBe(body.period_end as string);
  } finally {
    await tiny.close();
  }
});

describe("rate limits", () => {
  test("over the plan's rate: 429 rate_limited with Retry-After, for every /v1 route", async () => {
    const limited = await makeTestApp();
    try {
      await limited.store.setPlan("slow", { maxBatchSize: 10, monthlyUnits: 1000, rateLimit: 3 });
      const k = (await limited.issueKey("slow")).secret;
      const first = await Promise.all([
        limited.request("GET", "/v1/me", { key: k }),
        limited.request("GET", "/v1/usage", { key: k }),
        limited.request("POST", "/v1/lookup", { key: k, body: "{bad" }),
      ]);
      expect(first.map((r) => r.status)).not.toContain(429);
      const over = await limited.request("POST", "/v1/lookup", { key: k, body: { ip: "1.1.1.1" } });
      expect(over.status).toBe(429);
      expect(over.headers.get("retry-after")).toBe("1");
      expect((await problem(over)).code).toBe("rate_limited");
      // A second later the bucket has refilled.
      limited.clock = new Date(limited.clock.getTime() + 1000);
      expect((await limited.request("POST", "/v1/lookup", { key: k, body: { ip: "1.1.1.1" } })).status).toBe(200);
      const usage = (await (await limited.request("GET", "/v1/usage", { key: k })).json()) as { units: { used: number } };
      expect(usage.units.used).toBe(1);
    } finally {
      await limited.close();
    }
  });
});

test("a request that throws unexpectedly answers internal_error without internals", async () => {
  const broken = await makeTestApp();
  try {
    const k = (await broken.issueKey()).secret;
    // /v1/me needs a socket peer; in-process there is none, which is a server-side failure.
    const response = await broken.request("GET", "/v1/me", { key: k });
    expect(response.status).toBe(500);
    const body = await problem(response);
    expect(body.code).toBe("internal_error");
    expect(JSON.stringify(body)).not.toContain("at ");
  } finally {
    await broken.close();
  }
});

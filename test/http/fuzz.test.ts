import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { parseAddress } from "../../src/address/parse.ts";
import { ERROR_STATUS } from "../../src/errors/api-error.ts";
import { attachContext, RequestContext } from "../../src/http/request-context.ts";
import { makeTestApp, type TestApp } from "../support/test-app.ts";

let t: TestApp;
let key: string;
beforeAll(async () => {
  t = await makeTestApp();
  key = (await t.issueKey("unlimited")).secret;
});
afterAll(() => t.close());

const used = async () => ((await (await t.request("GET", "/v1/usage", { key })).json()) as { units: { used: number } }).units.used;

/** Sends anything; checks the answer is a 200 that charged its addresses, or a contract error that charged nothing. */
async function expectContractAnswer(request: Request, addresses: number) {
  attachContext(request, new RequestContext(undefined, () => parseAddress("198.51.100.7")));
  const before = await used();
  const response = await t.app.handle(request);
  const after = await used();
  expect(response.status).not.toBe(500);
  if (response.status === 200) {
    expect(after - before).toBe(addresses);
    return;
  }
  // A CORS preflight on a /v1 route: an empty 204, which charges nothing (CONTRACT §16).
  if (request.method === "OPTIONS" && response.status === 204) {
    expect(after).toBe(before);
    expect(await response.text()).toBe("");
    return;
  }
  expect(response.headers.get("content-type")).toBe("application/problem+json");
  const body = (await response.json()) as { code: keyof typeof ERROR_STATUS; status: number };
  expect(ERROR_STATUS[body.code] as number).toBe(response.status);
  expect(after).toBe(before);
}

const encoder = new TextEncoder();
const methods = fc.constantFrom("GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS");
const paths = fc.oneof(fc.constantFrom("/v1/lookup", "/v1/lookup/batch", "/v1/me", "/v1/usage", "/healthz", "/v1/", "/v1/lookup/x", "/V1/LOOKUP"), fc.webPath());
const contentTypes = fc.constantFrom("application/json", "application/json; charset=utf-8", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data", "application/json; charset=utf-16", "");
const bodies = fc.oneof(
  fc.json().map((text) => encoder.encode(text)),
  fc.string().map((text) => encoder.encode(text)),
  fc.uint8Array({ maxLength: 200 }),
  fc.array(fc.oneof(fc.string(), fc.ipV4(), fc.ipV6(), fc.integer(), fc.constant(null)), { maxLength: 30 }).map((ips) => encoder.encode(JSON.stringify({ ips }))),
  fc.oneof(fc.string(), fc.ipV4(), fc.ipV6(), fc.ipV4Extended()).map((ip) => encoder.encode(JSON.stringify({ ip }))),
);

describe("HTTP fuzzing in-process", () => {
  test("random methods, paths, content types, keys and bodies always get a contract answer", async () => {
    await fc.assert(
      fc.asyncProperty(methods, paths, contentTypes, bodies, fc.boolean(), async (method, path, contentType, body, withKey) => {
        const headers: Record<string, string> = {};
        if (contentType) headers["content-type"] = contentType;
        if (withKey) headers.authorization = `Bearer ${key}`;
        const hasBody = method !== "GET" && method !== "OPTIONS";
        const request = new Request(`http://iplookup.test${path.startsWith("/") ? path : `/${path}`}`, { method, headers, body: hasBody ? body : undefined });
        let addresses = 0;
        if (method === "POST" && (path === "/v1/lookup" || path === "/v1/lookup/batch")) {
          try {
            const parsed = JSON.parse(new TextDecoder().decode(body)) as { ip?: unknown; ips?: unknown[] };
            addresses = path === "/v1/lookup/batch" && Array.isArray(parsed?.ips) ? parsed.ips.length : 1;
          } catch {}
        }
        await expectContractAnswer(request, addresses);
      }),
      { numRuns: 1500 },
    );
  });

  const hostile: Array<[string, () => string | Uint8Array, number]> = [
    ["huge numbers", () => '{"ip": 1e400}', 400],
    ["a number as ip text", () => '{"ip": "1e400"}', 400],
    ["deep nesting", () => `{"ips": ${"[".repeat(100_000)}${"]".repeat(100_000)}}`, 400],
    ["invalid UTF-8", () => new Uint8Array([0x7b, 0x22, 0x69, 0x70, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc3, 0x28, 0x22, 0x7d]), 400],
    ["a NUL inside the address", () => '{"ip": "1.1.1.1\\u0000"}', 400],
    ["a 100,000-entry batch", () => JSON.stringify({ ips: Array(100_000).fill("1.1.1.1") }), 413],
    ["a body of 10 MB", () => `{"ip":"${"1".repeat(10 * 1024 * 1024)}"}`, 413],
    ["duplicate members", () => '{"ip":"10.0.0.1","ip":"1.1.1.1"}', 200],
    ["prototype keys", () => '{"__proto__": {"ip": "1.1.1.1"}}', 400],
    ["an ip of 1 MB", () => `{"ip":"${"a".repeat(1024 * 1024)}"}`, 400],
  ];
  for (const [name, body, status] of hostile) {
    test(name, async () => {
      const path = name.includes("batch") || name.includes("nesting") ? "/v1/lookup/batch" : "/v1/lookup";
      const request = new Request(`http://iplookup.test${path}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: body() });
      const before = await used();
      const response = await t.app.handle(request);
      expect(response.status).toBe(status);
      expect(await used()).toBe(before + (status === 200 ? 1 : 0));
    });
  }
});

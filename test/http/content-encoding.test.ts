import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { gzipSync } from "node:zlib";
import { adminOpenApiDocument } from "../../src/admin/admin-openapi.ts";
import { openApiDocument } from "../../src/http/openapi.ts";
import { adminAppOf, makeTestApp, type TestApp } from "../support/test-app.ts";

/**
 * Request bodies with a content coding (RFC 9110 §8.4.1): iplookup decodes none, so a
 * Content-Encoding other than identity is 415 unsupported_media_type (RFC 9110 §15.5.16),
 * with Accept-Encoding: identity, on the public POST routes and the admin API's bodies,
 * before the body is read and before anything is charged or changed.
 */
let t: TestApp;
let key: string;
let token: string;
beforeAll(async () => {
  t = await makeTestApp({ maxBody: 64 * 1024 });
  key = (await t.issueKey("unlimited")).secret;
  token = (await t.store.createAdminToken("ops")).secret;
});
afterAll(() => t.close());

const unitsUsed = async () => ((await (await t.request("GET", "/v1/usage", { key })).json()) as { units: { used: number } }).units.used;
const post = (path: string, body: string | Uint8Array, headers: Record<string, string>) =>
  t.app.handle(new Request(`http://iplookup.test${path}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers }, body }));

async function refusedCoding(response: Response, coding: string) {
  expect(response.status).toBe(415);
  expect(response.headers.get("content-type")).toBe("application/problem+json");
  expect(response.headers.get("accept-encoding")).toBe("identity");
  expect(await response.json()).toEqual({
    type: "about:blank",
    title: "Unsupported Media Type",
    status: 415,
    code: "unsupported_media_type",
    detail: `Content-Encoding ${coding} is not supported: request bodies are accepted unencoded only; send the body without a Content-Encoding`,
  });
}

describe("the public POST routes", () => {
  test("Content-Encoding: gzip on a plain body: 415, nothing charged", async () => {
    const before = await unitsUsed();
    await refusedCoding(await post("/v1/lookup", '{"ip":"1.1.1.1"}', { "content-encoding": "gzip" }), "gzip");
    await refusedCoding(await post("/v1/lookup/batch", '{"ips":["1.1.1.1","8.8.8.8"]}', { "content-encoding": "gzip" }), "gzip");
    expect(await unitsUsed()).toBe(before);
  });

  test("a real gzip body: 415 naming the coding, not invalid_json; nothing charged", async () => {
    const before = await unitsUsed();
    await refusedCoding(await post("/v1/lookup", gzipSync('{"ip":"1.1.1.1"}'), { "content-encoding": "gzip" }), "gzip");
    await refusedCoding(await post("/v1/lookup/batch", gzipSync('{"ips":["1.1.1.1"]}'), { "content-encoding": "GZip" }), "GZip");
    expect(await unitsUsed()).toBe(before);
  });

  test.each([
    ["deflate", "deflate"],
    ["br", "br"],
    ["zstd", "zstd"],
    ["x-gzip", "x-gzip"],
    ["gzip, identity", "gzip"],
    ["identity, br", "br"],
    ["deflate,gzip", "deflate, gzip"],
  ])("Content-Encoding: %s: 415 naming %s, nothing charged", async (header, named) => {
    const before = await unitsUsed();
    await refusedCoding(await post("/v1/lookup", '{"ip":"1.1.1.1"}', { "content-encoding": header }), named);
    expect(await unitsUsed()).toBe(before);
  });

  test.each(["identity", "IDENTITY", " identity ", "identity, identity", ""])("Content-Encoding: %p is no coding: answered and charged", async (header) => {
    const before = await unitsUsed();
    const response = await post("/v1/lookup", '{"ip":"1.1.1.1"}', { "content-encoding": header });
    expect(response.status).toBe(200);
    expect(await unitsUsed()).toBe(before + 1);
  });

  test("in the contract's order: the key first, the media type before the coding, the coding before the size", async () => {
    const noKey = await t.app.handle(new Request("http://iplookup.test/v1/lookup", { method: "POST", headers: { "content-type": "application/json", "content-encoding": "gzip" }, body: "{}" }));
    expect([noKey.status, ((await noKey.json()) as { code: string }).code]).toEqual([401, "missing_key"]);
    const textPlain = await post("/v1/lookup", "{}", { "content-type": "text/plain", "content-encoding": "gzip" });
    expect(((await textPlain.json()) as { detail: string }).detail).toBe("send the body as application/json (charset utf-8, if any)");
    await refusedCoding(await post("/v1/lookup/batch", `{"ips":[${'"1.1.1.1",'.repeat(10_000)}"1.1.1.1"]}`, { "content-encoding": "gzip" }), "gzip");
  });

  test("a route without a body is not affected", async () => {
    const response = await t.app.handle(new Request("http://iplookup.test/v1/asn/13335", { headers: { authorization: `Bearer ${key}`, "content-encoding": "gzip" } }));
    expect(response.status).toBe(200);
  });
});

describe("the admin API's bodies", () => {
  const admin = () => adminAppOf(t);
  const send = (method: string, path: string, body: string | Uint8Array, coding: string) =>
    admin().handle(new Request(`http://admin${path}`, { method, headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "content-encoding": coding }, body }));

  test("POST keys, PATCH a key, PUT a plan, a rotation with a body: 415, nothing changed", async () => {
    const keysBefore = await t.store.listKeys();
    await refusedCoding(await send("POST", "/admin/v1/keys", '{"name":"zipped"}', "gzip"), "gzip");
    await refusedCoding(await send("POST", "/admin/v1/keys", gzipSync('{"name":"zipped"}'), "gzip"), "gzip");
    const { key: target, secret } = await t.store.createKey("target", "free");
    await refusedCoding(await send("PATCH", `/admin/v1/keys/${target.id}`, '{"plan":"standard"}', "br"), "br");
    await refusedCoding(await send("POST", `/admin/v1/keys/${target.id}/rotate`, '{"grace":"1h"}', "deflate"), "deflate");
    await refusedCoding(await send("PUT", "/admin/v1/plans/zipped", '{"max_batch_size":1,"monthly_units":1,"rate_limit":1}', "zstd"), "zstd");
    const after = await t.store.listKeys();
    expect(after.map((k) => k.name).sort()).toEqual([...keysBefore.map((k) => k.name), "target"].sort());
    expect(after.find((k) => k.id === target.id)?.plan).toBe("free");
    // Not rotated: its secret still works.
    await t.keys.refresh();
    expect((await t.request("GET", "/v1/usage", { key: secret })).status).toBe(200);
    expect((await t.store.listPlans()).map((plan) => plan.name)).not.toContain("zipped");
    // identity is no coding.
    expect((await send("PATCH", `/admin/v1/keys/${target.id}`, '{"plan":"standard"}', "identity")).status).toBe(200);
  });
});

test("the OpenAPI documents say so where they list the media-type refusal: 415 with Accept-Encoding", () => {
  type Doc = { paths: Record<string, Record<string, { responses: Record<string, { description: string; headers?: Record<string, { $ref: string }> }> }>>; components: { headers: Record<string, unknown> } };
  for (const [doc, operations] of [
    [openApiDocument("t") as unknown as Doc, [["/v1/lookup", "post"], ["/v1/lookup/batch", "post"]]],
    [adminOpenApiDocument("t") as unknown as Doc, [["/admin/v1/keys", "post"], ["/admin/v1/keys/{id}", "patch"], ["/admin/v1/keys/{id}/rotate", "post"], ["/admin/v1/plans/{name}", "put"]]],
  ] as const) {
    for (const [path, method] of operations) {
      const refused = doc.paths[path]?.[method]?.responses["415"];
      expect({ path, description: refused?.description }).toEqual({ path, description: expect.stringContaining("Content-Encoding other than identity") });
      expect(refused?.headers?.["Accept-Encoding"]).toEqual({ $ref: "#/components/headers/Accept-Encoding" });
      expect(doc.components.headers["Accept-Encoding"]).toBeDefined();
    }
  }
});

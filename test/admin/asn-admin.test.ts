import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createAdminApp } from "../../src/admin/admin-app.ts";
import { asnIndexOf } from "../../src/asn/asn-index.ts";
import { defaultIndex } from "../support/default-data.ts";
import { makeTestApp, type TestApp } from "../support/test-app.ts";

/** /admin/v1/asn: the console's AS lookups, the public API's answers at no cost, behind an admin token. */

let t: TestApp;
let token: string;
let apiKey: string;
const adminApp = (withIndex = true) =>
  createAdminApp({
    store: t.store,
    now: () => new Date(),
    version: "t",
    workers: 1,
    uptimeSeconds: () => 1,
    dataInfo: () => defaultIndex().info,
    index: withIndex ? () => defaultIndex() : undefined,
  });
beforeAll(async () => {
  t = await makeTestApp();
  token = (await t.store.createAdminToken("ops")).secret;
  apiKey = (await t.issueKey("free")).secret;
});
afterAll(() => t.close());

const get = (path: string, secret: string | null = token, app = adminApp()) =>
  app.handle(new Request(`http://admin${path}`, { headers: secret === null ? {} : { authorization: `Bearer ${secret}` } }));

describe("GET /admin/v1/asn/{asn} and /admin/v1/asn?q=", () => {
  test("the same JSON as the public API, with the data version, never cached", async () => {
    const response = await get("/admin/v1/asn/AS13335");
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(response.headers.get("x-data-version")).toBe(defaultIndex().info.dataVersion);
    expect(await response.text()).toBe(await (await t.request("GET", "/v1/asn/AS13335", { key: apiKey })).text());
    const search = await get("/admin/v1/asn?q=cloudflare");
    expect(search.status).toBe(200);
    expect(((await search.json()) as { results: { asn: number }[] }).results[0]!.asn).toBe(13335);
  });

  test("costs the API key nothing, and needs no API key", async () => {
    const usage = async () => ((await (await t.request("GET", "/v1/usage", { key: apiKey })).json()) as { units: { used: number } }).units.used;
    const before = await usage();
    for (let i = 0; i < 5; i++) expect((await get("/admin/v1/asn/2500")).status).toBe(200);
    expect(await usage()).toBe(before);
  });

  test("an admin token is required; an API key is refused", async () => {
    expect((await get("/admin/v1/asn/13335", null)).status).toBe(401);
    const withKey = await get("/admin/v1/asn/13335", apiKey);
    expect(withKey.status).toBe(401);
    expect(await withKey.json()).toMatchObject({ code: "invalid_key" });
  });

  test("invalid_asn, asn_not_public and a bad q, as on the public API", async () => {
    expect(await (await get("/admin/v1/asn/AS-1")).json()).toMatchObject({ status: 400, code: "invalid_asn" });
    expect(await (await get("/admin/v1/asn/4200000000")).json()).toMatchObject({ status: 400, code: "asn_not_public", reason: "private-use" });
    expect(await (await get("/admin/v1/asn?q=")).json()).toMatchObject({ status: 400, code: "invalid_request" });
    expect(await (await get("/admin/v1/asn?q=a&q=b")).json()).toMatchObject({ status: 400, code: "invalid_request" });
    expect(await (await get("/admin/v1/asn")).json()).toMatchObject({ status: 400, code: "invalid_request" });
    // …and in q, with the public API's answer, word for word.
    for (const q of ["%zz", "%E2%82"]) {
      const admin = await (await get(`/admin/v1/asn?q=${q}`)).json();
      expect(admin).toMatchObject({ status: 400, code: "invalid_request", detail: `the query "q=${q}" is not valid percent-encoding (UTF-8)` });
      expect(await (await t.request("GET", `/v1/asn?q=${q}`, { key: apiKey })).json()).toEqual(admin);
    }
    expect(await (await get("/admin/v1/asn/4199999999")).json()).toEqual(JSON.parse(JSON.stringify(asnIndexOf(defaultIndex()).result(4199999999))));
  });

  test("a number in bad percent-encoding, or holding a control character, answers as on the public API: 400 invalid_asn, word for word", async () => {
    const key = (await t.issueKey("unlimited", "segments")).secret;
    const segments = ["%zz", "%", "%E2%82", "AS13335%", "%ED%A0%80", "%00", "AS%00", "AS13335%0A", "a%1Bb", "%C2%85", "%41S13335", "13335%20", "%2F", "x".repeat(100)];
    for (const segment of segments) {
      const admin = await get(`/admin/v1/asn/${segment}`);
      const body = await admin.text();
      expect({ segment, body }).toEqual({ segment, body: await (await t.request("GET", `/v1/asn/${segment}`, { key })).text() });
      if (segment !== "%41S13335") expect({ segment, status: admin.status, code: (JSON.parse(body) as { code: string }).code }).toEqual({ segment, status: 400, code: "invalid_asn" });
    }
    expect(await (await get("/admin/v1/asn/%zz")).json()).toMatchObject({ detail: "the AS number in the path is not valid percent-encoded text" });
    // A control character is quoted as ?, never as it came.
    expect(await (await get("/admin/v1/asn/AS%00%C2%9B")).json()).toMatchObject({ detail: expect.stringMatching(/^"AS\?\?" is not an AS number/) });
  });

  test("a search text, and the query around it, answer as on the public API, word for word", async () => {
    const key = (await t.issueKey("unlimited", "queries")).secret;
    for (const query of ["q=%00", "q=%C2%85", "q=a%0Ab", "q=%ED%A0%80", "q=a&q=b", "q=a&x=1", "x=1", "q=a&x=%00", "q=a&x=%zz", "q", "q=%F0%9F%98%80"]) {
      const admin = await (await get(`/admin/v1/asn?${query}`)).text();
      expect({ query, admin }).toEqual({ query, admin: await (await t.request("GET", `/v1/asn?${query}`, { key })).text() });
    }
    for (const query of ["x=%00", "a=1&a=2", "x=%zz"]) {
      const admin = await (await get(`/admin/v1/asn/13335?${query}`)).text();
      expect({ query, admin }).toEqual({ query, admin: await (await t.request("GET", `/v1/asn/13335?${query}`, { key })).text() });
    }
  });

  test("an admin app without data answers 404 there", async () => {
    const response = await get("/admin/v1/asn/13335", token, adminApp(false));
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ code: "not_found" });
  });
});

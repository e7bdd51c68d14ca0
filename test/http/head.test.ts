import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { makeTestApp, type TestApp } from "../support/test-app.ts";

let t: TestApp;
let key: string;
beforeAll(async () => {
  t = await makeTestApp();
  key = (await t.issueKey("unlimited")).secret;
});
afterAll(() => t.close());

/** HEAD answers like GET without a body, wherever GET is answered; nowhere else. */
describe("HEAD", () => {
  test.each(["/healthz", "/readyz", "/metrics", "/openapi.json", "/docs", "/v1/usage"])("HEAD %s: GET's status and content type, no body", async (path) => {
    const get = await t.request("GET", path, { key });
    const head = await t.request("HEAD", path, { key });
    expect(get.status).toBe(200);
    expect(head.status).toBe(200);
    expect(head.headers.get("content-type")).toBe(get.headers.get("content-type"));
    expect(await head.text()).toBe("");
  });

  test("HEAD on a /v1 route still needs a key and costs no unit", async () => {
    const response = await t.request("HEAD", "/v1/usage");
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toContain("Bearer");
    const usage = (await (await t.request("GET", "/v1/usage", { key })).json()) as { units: { used: number } };
    expect(usage.units.used).toBe(0);
  });

  test("HEAD on a POST-only route is 405, and GET routes list HEAD as allowed", async () => {
    const head = await t.request("HEAD", "/v1/lookup", { key });
    expect(head.status).toBe(405);
    expect(head.headers.get("allow")).toBe("POST, OPTIONS");
    const post = await t.request("POST", "/healthz", { body: {} });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
  });

  test("HEAD on an unknown path is 404", async () => {
    expect((await t.request("HEAD", "/v1/nothing", { key })).status).toBe(404);
  });
});

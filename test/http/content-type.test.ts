import { afterAll, beforeAll, expect, test } from "bun:test";
import { makeTestApp, type TestApp } from "../support/test-app.ts";

let t: TestApp;
let key: string;
beforeAll(async () => {
  t = await makeTestApp();
  key = (await t.issueKey()).secret;
});
afterAll(() => t.close());

test("every JSON answer says application/json the same way", async () => {
  const answers = await Promise.all([
    t.request("GET", "/healthz"),
    t.request("GET", "/readyz"),
    t.request("GET", "/openapi.json"),
    t.request("GET", "/v1/usage", { key }),
    t.request("POST", "/v1/lookup", { key, body: { ip: "1.1.1.1" } }),
    t.request("POST", "/v1/lookup/batch", { key, body: { ips: ["1.1.1.1"] } }),
  ]);
  for (const answer of answers) {
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toBe("application/json");
    await answer.json();
  }
});

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { makeTestApp, type TestApp } from "../support/test-app.ts";

let t: TestApp;
let key: string;
beforeAll(async () => {
  t = await makeTestApp();
  key = (await t.issueKey()).secret;
});
afterAll(() => t.close());

/**
 * Routing reads the path from the request URL, which the server builds from the Host
 * header: a short host name ("ip", "a", a one-letter service name behind a proxy) must
 * route like any other.
 */
describe("every Host routes the same", () => {
  const origins = ["http://a", "http://ip", "http://geo", "http://a:1", "http://10.0.0.1", "http://[::1]:8080", "http://iplookup.internal.example:8080"];

  test.each(origins)("%s: lookup, health and 404", async (origin) => {
    const lookup = await t.app.handle(
      new Request(`${origin}/v1/lookup`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ ip: "1.1.1.1" }),
      }),
    );
    expect(lookup.status).toBe(200);
    expect(((await lookup.json()) as { asn: number }).asn).toBe(13335);
    expect((await t.app.handle(new Request(`${origin}/healthz`))).status).toBe(200);
    expect((await t.app.handle(new Request(`${origin}/healthz?full=1`))).status).toBe(200);
    const missing = await t.app.handle(new Request(`${origin}/lookup`));
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { detail: string }).detail).toBe("there is no route /lookup");
  });
});

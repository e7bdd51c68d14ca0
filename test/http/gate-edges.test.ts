/**
 * The gate's rules at their edges, each a test that fails if the rule is off by one or
 * read too strictly: the body-size limit, the Bearer scheme's case.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { makeTestApp, type TestApp } from "../support/test-app.ts";

const MAX_BODY = 4096;
let t: TestApp;
let key: string;
beforeAll(async () => {
  t = await makeTestApp({ maxBody: MAX_BODY });
  key = (await t.issueKey()).secret;
});
afterAll(() => t.close());

/** A batch body of exactly `bytes` bytes: the JSON, then spaces (JSON allows trailing whitespace). */
function bodyOf(bytes: number): string {
  const json = JSON.stringify({ ips: ["1.1.1.1", "8.8.8.8"] });
  return json + " ".repeat(bytes - json.length);
}

function post(body: string, chunked: boolean): Promise<Response> {
  const encoded = new TextEncoder().encode(body);
  return t.app.handle(
    new Request("http://iplookup.test/v1/lookup/batch", {
      method: "POST",
      // A client sending the body whole declares its length, as a socket's request has it.
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...(chunked ? {} : { "content-length": String(encoded.length) }) },
      body: chunked
        ? new ReadableStream({
            start(controller) {
              // In pieces, as a chunked upload arrives.
              for (let at = 0; at < encoded.length; at += 1000) controller.enqueue(encoded.subarray(at, at + 1000));
              controller.close();
            },
          })
        : encoded,
    }),
  );
}

describe("the body-size limit (--max-body) at its edge", () => {
  for (const chunked of [false, true]) {
    const how = chunked ? "chunked" : "with a Content-Length";
    test(`${how}: exactly the limit is read; one byte more is payload_too_large, charging nothing`, async () => {
      const atLimit = await post(bodyOf(MAX_BODY), chunked);
      expect(atLimit.status).toBe(200);
      expect(atLimit.headers.get("x-units-consumed")).toBe("2");
      const used = async () => ((await (await t.request("GET", "/v1/usage", { key })).json()) as { units: { used: number } }).units.used;
      const before = await used();
      const over = await post(bodyOf(MAX_BODY + 1), chunked);
      expect(over.status).toBe(413);
      expect(((await over.json()) as { code: string }).code).toBe("payload_too_large");
      expect(await used()).toBe(before);
    });
  }
});

describe("the Bearer scheme is matched without regard to case (RFC 9110 §11.1)", () => {
  test.each(["Bearer", "bearer", "BEARER", "bEaReR"])("%s KEY is a key", async (scheme) => {
    const response = await t.app.handle(new Request("http://iplookup.test/v1/usage", { headers: { authorization: `${scheme} ${key}` } }));
    expect(response.status).toBe(200);
  });

  test.each(["Basic", "Bearerx", "Token"])("%s KEY is no key: missing_key", async (scheme) => {
    const response = await t.app.handle(new Request("http://iplookup.test/v1/usage", { headers: { authorization: `${scheme} ${key}` } }));
    expect(response.status).toBe(401);
    expect(((await response.json()) as { code: string }).code).toBe("missing_key");
  });
});

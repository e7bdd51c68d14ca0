import { describe, expect, test } from "bun:test";
import { ApiError } from "../../src/errors/api-error.ts";
import { readJsonBody } from "../../src/http/json-body.ts";

const MAX = 1024;

function post(body: string | Uint8Array, chunked = false): Request {
  const init: RequestInit = { method: "POST", headers: { "content-type": "application/json" } };
  init.body = chunked
    ? new ReadableStream({
        start(controller) {
          controller.enqueue(typeof body === "string" ? new TextEncoder().encode(body) : body);
          controller.close();
        },
      })
    : body;
  return new Request("http://iplookup.test/v1/lookup/batch", init);
}

const nested = (levels: number) => `${"[".repeat(levels)}${"]".repeat(levels)}`;

async function refusal(request: Request): Promise<ApiError> {
  const error = await readJsonBody(request, MAX).then(() => undefined, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

describe("readJsonBody", () => {
  for (const chunked of [false, true]) {
    const how = chunked ? "chunked" : "with a Content-Length";
    test(`${how}: parses JSON`, async () => {
      expect(await readJsonBody(post('{"ips":["1.1.1.1"]}', chunked), MAX)).toEqual({ ips: ["1.1.1.1"] });
    });

    test(`${how}: 32 levels of nesting are read, 33 refused`, async () => {
      expect(await readJsonBody(post(nested(32), chunked), MAX)).toBeArray();
      const error = await refusal(post(nested(33), chunked));
      expect(error.code).toBe("invalid_request");
      expect(error.message).toBe("the request body is nested deeper than 32 levels");
      const inObject = await refusal(post(`{"ips":${nested(32)}}`, chunked));
      expect(inObject.message).toBe("the request body is nested deeper than 32 levels");
    });

    test(`${how}: a body that is not UTF-8 is invalid_json, however it would parse with its bad bytes replaced`, async () => {
      const utf8 = (text: string) => [...new TextEncoder().encode(text)];
      for (const bad of [
        [0xff], // never in UTF-8
        [0xc0, 0xae], // an overlong "."
        [0xed, 0xa0, 0x80], // a UTF-16 surrogate, encoded
        [0xe2, 0x82], // cut short
        [0xe9], // Latin-1 "é"
      ]) {
        const body = new Uint8Array([...utf8('{"ip":"1.1.1.1'), ...bad, ...utf8('"}')]);
        const error = await refusal(post(body, chunked));
        expect({ bad, code: error.code, message: error.message }).toEqual({ bad, code: "invalid_json", message: "the request body is not valid JSON: it is not UTF-8 text" });
      }
    });

    test(`${how}: UTF-8 beyond ASCII, U+FFFD itself and a leading byte order mark are read`, async () => {
      expect(await readJsonBody(post('{"ip":"\u00e9\ufffd\u{1f600}"}', chunked), MAX)).toEqual({ ip: "é\ufffd😀" });
      const withBom = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode('{"ip":"1.1.1.1"}')]);
      expect(await readJsonBody(post(withBom, chunked), MAX)).toEqual({ ip: "1.1.1.1" });
    });

    test(`${how}: empty and malformed bodies are invalid_json`, async () => {
      expect((await refusal(post("", chunked))).code).toBe("invalid_json");
      expect((await refusal(post('{"ip":', chunked))).code).toBe("invalid_json");
    });
  }

  test("a chunked body past the limit is payload_too_large", async () => {
    expect((await refusal(post(`"${"x".repeat(MAX)}"`, true))).code).toBe("payload_too_large");
  });
});

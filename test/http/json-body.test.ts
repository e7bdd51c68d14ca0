import { describe, expect, test } from "bun:test";
import { ApiError } from "../../src/errors/api-error.ts";
import { readJsonBody } from "../../src/http/json-body.ts";

const MAX = 1024;

function post(body: string, chunked = false): Request {
  const init: RequestInit = { method: "POST", headers: { "content-type": "application/json" } };
  init.body = chunked
    ? new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(body));
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

    test(`${how}: empty and malformed bodies are invalid_json`, async () => {
      expect((await refusal(post("", chunked))).code).toBe("invalid_json");
      expect((await refusal(post('{"ip":', chunked))).code).toBe("invalid_json");
    });
  }

  test("a chunked body past the limit is payload_too_large", async () => {
    expect((await refusal(post(`"${"x".repeat(MAX)}"`, true))).code).toBe("payload_too_large");
  });
});

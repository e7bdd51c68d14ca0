import { afterAll, beforeAll, expect, test } from "bun:test";
import { adminOpenApiDocument } from "../../src/admin/admin-openapi.ts";
import { adminAppOf, makeTestApp, type TestApp } from "../support/test-app.ts";

/**
 * POST /admin/v1/keys/{id}/revoke takes no body, and is refused one it does not take, as
 * every admin route is: left out or `{}` it revokes, `{"name":"x"}` is 400
 * invalid_request and revokes nothing (as …/rotate's optional body is read).
 */
let t: TestApp;
let token: string;
beforeAll(async () => {
  t = await makeTestApp();
  token = (await t.store.createAdminToken("ops")).secret;
});
afterAll(() => t.close());

async function revoke(id: string, body?: string, contentType = "application/json"): Promise<{ status: number; body: { code?: string; revoked_at?: string | null } }> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (body !== undefined) headers["content-type"] = contentType;
  // As a client sends an empty body on the wire.
  if (body === "") headers["content-length"] = "0";
  const response = await adminAppOf(t).handle(new Request(`http://admin/admin/v1/keys/${id}/revoke`, { method: "POST", headers, body }));
  return { status: response.status, body: (await response.json()) as { code?: string; revoked_at?: string | null } };
}

test('a body with a member it does not take ({"name":"x"}), one not JSON, or not sent as JSON: refused, and the key stays active', async () => {
  const { key } = await t.store.createKey("kept", "free");
  for (const [body, contentType, status, code] of [
    ['{"name":"x"}', "application/json", 400, "invalid_request"],
    ['{"grace":"1h"}', "application/json", 400, "invalid_request"],
    ["[]", "application/json", 400, "invalid_request"],
    ["{", "application/json", 400, "invalid_json"],
    ["{}", "text/plain", 415, "unsupported_media_type"],
  ] as const) {
    const answer = await revoke(key.id, body, contentType);
    expect({ body, status: answer.status, code: answer.body.code }).toEqual({ body, status, code });
  }
  expect((await t.store.getKey(key.id))?.revokedAt).toBeNull();
});

test("no body, an empty one, or {}: the key revoked", async () => {
  for (const body of [undefined, "", "{}"]) {
    const { key } = await t.store.createKey("leaving", "free");
    const answer = await revoke(key.id, body);
    expect({ body, status: answer.status }).toEqual({ body, status: 200 });
    expect(answer.body.revoked_at).toEqual(expect.any(String));
  }
});

test("the admin OpenAPI document gives …/revoke an optional body of no members", () => {
  const document = adminOpenApiDocument("test") as unknown as {
    paths: Record<string, { post?: { requestBody?: { required: boolean } } }>;
    components: { schemas: Record<string, unknown> };
  };
  const body = document.paths["/admin/v1/keys/{id}/revoke"]?.post?.requestBody;
  expect(body?.required).toBe(false);
  expect(document.components.schemas.RevokeKeyRequest).toMatchObject({ type: "object", properties: {}, additionalProperties: false });
});

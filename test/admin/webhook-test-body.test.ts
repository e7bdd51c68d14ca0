import { afterAll, beforeAll, expect, test } from "bun:test";
import { adminOpenApiDocument } from "../../src/admin/admin-openapi.ts";
import { adminAppOf, makeTestApp, type TestApp } from "../support/test-app.ts";
import { WebhookReceiver } from "../support/webhook-receiver.ts";

/**
 * POST /admin/v1/webhooks/{id}/test takes no body, and is refused one it does not take,
 * as …/revoke is: left out, empty or `{}` it sends the test event; `{"event":"key.created"}` is
 * 400 invalid_request and sends nothing.
 */
let t: TestApp;
let token: string;
let app: ReturnType<typeof adminAppOf>;
let secret = "";
const receiver = new WebhookReceiver(() => secret);
let webhookId: string;
beforeAll(async () => {
  t = await makeTestApp();
  app = adminAppOf(t);
  token = (await t.store.createAdminToken("ops")).secret;
  receiver.start();
  const created = await call("POST", "/admin/v1/webhooks", JSON.stringify({ url: receiver.url, events: ["key.created"] }));
  expect(created.status).toBe(201);
  ({ id: webhookId, secret } = created.body as { id: string; secret: string });
});
afterAll(async () => {
  await receiver.stop();
  await t.close();
});

async function call(method: string, path: string, body?: string, contentType = "application/json"): Promise<{ status: number; body: Record<string, unknown> }> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (body !== undefined) headers["content-type"] = contentType;
  // As a client sends an empty body on the wire.
  if (body === "") headers["content-length"] = "0";
  const response = await app.handle(new Request(`http://admin${path}`, { method, headers, body }));
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const sendTest = (body?: string, contentType?: string) => call("POST", `/admin/v1/webhooks/${webhookId}/test`, body, contentType);
const deliveries = async () => ((await call("GET", `/admin/v1/webhooks/${webhookId}/deliveries`)).body.deliveries as unknown[]).length;

test('a body with a member it does not take ({"event":"key.created"}), one not JSON, or not sent as JSON: refused, and nothing is sent', async () => {
  for (const [body, contentType, status, code] of [
    ['{"event":"key.created"}', "application/json", 400, "invalid_request"],
    ['{"url":"http://127.0.0.1:9/"}', "application/json", 400, "invalid_request"],
    ["[]", "application/json", 400, "invalid_request"],
    ["{", "application/json", 400, "invalid_json"],
    ["{}", "text/plain", 415, "unsupported_media_type"],
  ] as const) {
    const answer = await sendTest(body, contentType);
    expect({ body, status: answer.status, code: answer.body.code }).toEqual({ body, status, code });
  }
  expect(await deliveries()).toBe(0);
  expect(receiver.received).toEqual([]);
});

test("no body, an empty one, or {}: the test event sent", async () => {
  for (const [index, body] of [undefined, "", "{}"].entries()) {
    const answer = await sendTest(body);
    expect({ body, status: answer.status, attempt: answer.body.attempt }).toEqual({ body, status: 200, attempt: expect.objectContaining({ state: "delivered", status: 200 }) });
    expect(receiver.received.length).toBe(index + 1);
  }
});

test("the admin OpenAPI document gives …/test an optional body of no members", () => {
  const document = adminOpenApiDocument("test") as unknown as {
    paths: Record<string, { post?: { requestBody?: { required: boolean }; responses: Record<string, unknown>; description: string } }>;
    components: { schemas: Record<string, unknown> };
  };
  const operation = document.paths["/admin/v1/webhooks/{id}/test"]?.post;
  expect(operation?.requestBody?.required).toBe(false);
  expect(operation?.description).not.toContain("ignored");
  expect(operation?.responses).toHaveProperty("400");
  expect(document.components.schemas.TestWebhookRequest).toMatchObject({ type: "object", properties: {}, additionalProperties: false });
});

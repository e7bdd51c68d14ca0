import { expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { createAdminApp } from "../../src/admin/admin-app.ts";
import { AdminDeliveryList, AdminWebhookList, IssuedWebhook, WebhookTestResult } from "../../src/admin/webhook-schemas.ts";
import { emitKeyEvent } from "../../src/events/emit.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { defaultIndex } from "../support/default-data.ts";
import { WebhookReceiver } from "../support/webhook-receiver.ts";

test("the admin app's webhook answers match the document's schemas", async () => {
  const store = SqliteStore.open(":memory:");
  const receiver = new WebhookReceiver(() => "").start();
  try {
    const index = defaultIndex();
    const app = createAdminApp({ store, now: () => new Date(), version: "t", workers: 1, uptimeSeconds: () => 3, dataInfo: () => index.info });
    const { secret } = await store.createAdminToken("ops");
    const call = async (method: string, path: string, body?: unknown): Promise<any> =>
      (await app.handle(new Request(`http://admin${path}`, { method, headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) }))).json();
    const created = await call("POST", "/admin/v1/webhooks", { url: receiver.url, events: ["key.created"] });
    expect(Value.Check(IssuedWebhook, created)).toBe(true);
    expect(Value.Check(AdminWebhookList, await call("GET", "/admin/v1/webhooks"))).toBe(true);
    await emitKeyEvent(store, "key.created", { id: "key_x", name: "x", plan: "free" }, new Date());
    const tested = await call("POST", `/admin/v1/webhooks/${created.id}/test`);
    expect(Value.Check(WebhookTestResult, tested)).toBe(true);
    const deliveries = await call("GET", `/admin/v1/webhooks/${created.id}/deliveries`);
    expect(deliveries.deliveries).toHaveLength(2);
    expect(Value.Check(AdminDeliveryList, deliveries)).toBe(true);
  } finally {
    await receiver.stop();
    await store.close();
  }
});

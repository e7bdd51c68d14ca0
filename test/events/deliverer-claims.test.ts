import { expect, test } from "bun:test";
import { Deliverer } from "../../src/events/deliverer.ts";
import type { sendMessage } from "../../src/events/send.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";

/**
 * The deliverer shares serve's main thread with answering requests: attempts that end
 * in the same turn of the event loop (a fan-out to receivers that answer at once) free
 * their slots for one claim, not one claim each, so a burst of deliveries costs the
 * thread a few claim transactions rather than one per delivery in a single stretch.
 */
test("attempts ending together are followed by one claim for their slots, not one each", async () => {
  const store = SqliteStore.open(":memory:");
  for (let i = 0; i < 5; i++) await store.webhooks.createWebhook(`http://127.0.0.1:9/hook-${i}`, ["key.created"]);
  for (let i = 0; i < 100; i++) await store.webhooks.addEvent({ id: `msg_${i}`, type: "key.created", body: "{}", createdAt: new Date().toISOString() });
  let claims = 0;
  const claim = store.webhooks.claimDeliveries.bind(store.webhooks);
  store.webhooks.claimDeliveries = (options) => (claims++, claim(options));
  let sent = 0;
  // Answers come back together, a moment after they were sent, as from receivers on loopback.
  const send: typeof sendMessage = async () => {
    await Bun.sleep(2);
    sent++;
    return { status: 204, response: null, error: null, durationMs: 2 };
  };
  const deliverer = new Deliverer({ store, send });
  deliverer.start(60_000);
  while (sent < 500) await Bun.sleep(5);
  await deliverer.stop();
  for (const webhook of await store.webhooks.listWebhooks()) {
    expect((await store.webhooks.listDeliveries(webhook.id, 200)).every((delivery) => delivery.state === "delivered")).toBe(true);
  }
  // 500 deliveries, at most 64 at once: a few claims a round of answers, far fewer than 500.
  expect(claims).toBeLessThan(100);
  await store.close();
});

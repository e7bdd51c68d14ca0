/**
 * An attempt's record that the state store cannot take at once (CONTRACT §16: each
 * event is sent once by the whole fleet). The receiver has answered 2xx; if the record
 * is lost, the delivery stays pending and is sent again once its lease has run out. So
 * a record that fails for a broken PostgreSQL connection or a database away for a
 * moment is tried again while the lease holds, and stop() stays prompt meanwhile.
 * Against a real PostgreSQL database (skipped when there is none) and a real receiver
 * on loopback.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { Deliverer, LEASE_MS } from "../../src/events/deliverer.ts";
import { emitKeyEvent } from "../../src/events/emit.ts";
import { PostgresStore } from "../../src/store/postgres-store.ts";
import { StoreUnavailableError, type AttemptResult, type Store } from "../../src/store/store.ts";
import { postgresAvailable, testStates } from "../support/postgres.ts";
import { startTcpProxy, type TcpProxy } from "../support/tcp-proxy.ts";
import { WebhookReceiver } from "../support/webhook-receiver.ts";

const states = testStates();
const KEY = { id: "key_abcdefghijklmnop", name: "acme", plan: "free" };

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * A PostgreSQL store (through a TCP proxy the test controls, with `proxied`), a receiver
 * with a webhook for key.created, and one key.created event in the outbox.
 */
async function setup(options: { proxied?: boolean } = {}) {
  const url = new URL(await states.fresh());
  let proxy: TcpProxy | undefined;
  if (options.proxied) {
    proxy = await startTcpProxy({ hostname: url.hostname, port: Number(url.port || 5432) });
    cleanups.push(() => proxy!.close());
    url.port = String(proxy.port);
  }
  const store = await PostgresStore.open(url.href);
  cleanups.push(() => store.close());
  let secret = "";
  const receiver = new WebhookReceiver(() => secret).start();
  cleanups.push(() => receiver.stop());
  const issued = await store.webhooks.createWebhook(receiver.url, ["key.created"]);
  secret = issued.secret;
  await emitKeyEvent(store, "key.created", KEY, new Date());
  return { store, receiver, webhook: issued.webhook, proxy };
}

/** The store with its webhooks' recordAttempt replaced by `record` (given the real one). */
function withRecord(store: Store, record: (real: (result: AttemptResult) => Promise<boolean>, result: AttemptResult) => Promise<boolean>): Store {
  const real = store.webhooks.recordAttempt.bind(store.webhooks);
  const webhooks = new Proxy(store.webhooks, {
    get: (target, property) => (property === "recordAttempt" ? (result: AttemptResult) => record(real, result) : Reflect.get(target, property, target)),
  });
  return new Proxy(store, { get: (target, property) => (property === "webhooks" ? webhooks : Reflect.get(target, property, target)) });
}

/** Sent once, recorded as delivered, and no longer claimable, even once the lease has run out. */
async function expectDeliveredOnce(store: Store, receiver: WebhookReceiver, webhookId: string): Promise<void> {
  expect(receiver.received).toHaveLength(1);
  const [record] = await store.webhooks.listDeliveries(webhookId, 10);
  expect(record).toMatchObject({ eventType: "key.created", state: "delivered", attempts: [{ attempt: 1, status: 200, error: null }] });
  expect(await store.webhooks.claimDeliveries({ limit: 10, nowMs: Date.now() + LEASE_MS, leaseMs: LEASE_MS })).toEqual([]);
}

describe.skipIf(!postgresAvailable)("recording an attempt the store cannot take at once", () => {
  test("a record that fails twice with StoreUnavailableError is tried again: the delivery is recorded once, and not sent again", async () => {
    const { store, receiver, webhook } = await setup();
    let failures = 0;
    let calls = 0;
    const flaky = withRecord(store, async (real, result) => {
      calls++;
      if (failures < 2) {
        failures++;
        throw new StoreUnavailableError("the state database cannot be reached: Connection closed");
      }
      return real(result);
    });
    const [report] = await new Deliverer({ store: flaky }).deliverDue();
    expect(report).toMatchObject({ status: 200, state: "delivered", attempt: 1 });
    expect(calls).toBe(3);
    await expectDeliveredOnce(store, receiver, webhook.id);
  });

  test("the connection breaks under the record, and PostgreSQL is away for a second: the attempt is recorded once it is back", async () => {
    const { store, receiver, webhook, proxy } = await setup({ proxied: true });
    // The record's statement never reaches the database: its connection is closed as it
    // is sent, and new connections are refused for a second.
    let cutAt: number | undefined;
    const restored = proxy!.cutWhenSent("UPDATE webhook_deliveries SET attempts").then(async () => {
      cutAt = performance.now();
      await Bun.sleep(1000);
      proxy!.restore();
    });
    const [report] = await new Deliverer({ store }).deliverDue();
    await Promise.race([restored, Bun.sleep(5000)]);
    // The record's first try met the cut.
    expect(cutAt).toBeDefined();
    expect(report).toMatchObject({ status: 200, state: "delivered", attempt: 1 });
    await expectDeliveredOnce(store, receiver, webhook.id);
  });

  test("tries stop when the delivery's lease would end: the record is given up, for another server to send it again", async () => {
    const { store, receiver, webhook } = await setup();
    let now = Date.now();
    let calls = 0;
    const away = withRecord(store, async () => {
      calls++;
      // The database stays away; time passes until the lease is over.
      now += LEASE_MS / 4;
      throw new StoreUnavailableError("the state database cannot be reached: Connection closed");
    });
    await expect(new Deliverer({ store: away, now: () => now }).deliverDue()).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(calls).toBe(4);
    expect(receiver.received).toHaveLength(1);
    const [record] = await store.webhooks.listDeliveries(webhook.id, 10);
    expect(record).toMatchObject({ state: "pending", attempts: [] });
  });

  test("stop() is prompt while a record is being tried again, and ends the tries", async () => {
    const { store, receiver } = await setup();
    let calls = 0;
    const away = withRecord(store, async () => {
      calls++;
      throw new StoreUnavailableError("the state database cannot be reached: Connection closed");
    });
    const deliverer = new Deliverer({ store: away });
    deliverer.start(60_000);
    await receiver.waitFor(1);
    const deadline = performance.now() + 10_000;
    while (calls < 3) {
      if (performance.now() > deadline) throw new Error(`the record was tried ${calls} times, not again`);
      await Bun.sleep(10);
    }
    const began = performance.now();
    await deliverer.stop(5000);
    expect(performance.now() - began).toBeLessThan(1000);
    const after = calls;
    await Bun.sleep(1500);
    expect(calls).toBe(after);
  });
});

import { afterEach, describe, expect, spyOn, test } from "bun:test";
import { Deliverer, LEASE_MS } from "../../src/events/deliverer.ts";
import { emitKeyEvent } from "../../src/events/emit.ts";
import { FIRST_RETRY_MS, RETRY_FOR_MS } from "../../src/events/retry-schedule.ts";
import { createLogger } from "../../src/log/logger.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { StateFileChangedError } from "../../src/store/state-file-identity.ts";
import { StoreUnavailableError } from "../../src/store/store.ts";
import { tempStatePaths } from "../store/temp-state.ts";
import { StuckReceiver } from "../support/stuck-receiver.ts";
import { WebhookReceiver } from "../support/webhook-receiver.ts";

/**
 * The deliverer against a real receiver on loopback, with the clock injected: each test
 * steps the wall clock through the retry schedule instead of waiting for it.
 */
const freshPath = tempStatePaths();
const T0 = Date.UTC(2026, 11, 1, 12, 0, 0);
const KEY = { id: "key_abcdefghijklmnop", name: "acme", plan: "free" };

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(path = freshPath()) {
  let now = T0;
  const store = SqliteStore.open(path);
  cleanups.push(() => store.close());
  let secret = "";
  const receiver = new WebhookReceiver(() => secret).start();
  cleanups.push(() => receiver.stop());
  const issued = await store.webhooks.createWebhook(receiver.url, ["key.created", "key.revoked"]);
  secret = issued.secret;
  const lines: string[] = [];
  const logger = createLogger("debug", (line) => lines.push(line));
  const deliverer = new Deliverer({ store, now: () => now, logger, timeoutMs: 2000 });
  return { store, receiver, webhook: issued.webhook, secret: issued.secret, deliverer, lines, path, setNow: (ms: number) => (now = ms) };
}

describe("delivering", () => {
  test("a delivery is signed as Standard Webhooks says; the receiver verifies it with its own HMAC", async () => {
    const { store, receiver, webhook, deliverer } = await setup();
    await emitKeyEvent(store, "key.created", KEY, new Date(T0));
    const [report] = await deliverer.deliverDue();
    expect(report).toMatchObject({ status: 200, state: "delivered", attempt: 1 });
    const [got] = receiver.received;
    expect(got!.signatureValid).toBe(true);
    expect(got!.headers["webhook-id"]).toMatch(/^msg_[A-Za-z0-9_-]{22}$/);
    expect(got!.headers["webhook-timestamp"]).toBe(String(T0 / 1000));
    expect(got!.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(got!.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(got!.body)).toEqual({ type: "key.created", timestamp: new Date(T0).toISOString(), data: { key: KEY } });
    const [record] = await store.webhooks.listDeliveries(webhook.id, 10);
    expect(record).toMatchObject({ state: "delivered", attempts: [{ attempt: 1, status: 200, response: "ok", error: null }] });
    // Nothing left to send.
    expect(await deliverer.deliverDue()).toEqual([]);
  });

  test("a tampered body or another secret does not verify (the check can fail)", async () => {
    const { store, receiver, deliverer, secret } = await setup();
    await emitKeyEvent(store, "key.created", KEY, new Date(T0));
    await deliverer.deliverDue();
    const { verify } = await import("../support/webhook-receiver.ts");
    const [got] = receiver.received;
    expect(verify(secret, got!.headers, got!.body)).toBe(true);
    expect(verify(secret, got!.headers, got!.body.replace("acme", "acmf"))).toBe(false);
    expect(verify("whsec_" + Buffer.alloc(24, 1).toString("base64"), got!.headers, got!.body)).toBe(false);
  });

  test("500, then 200: retried at the first retry (within a minute), same id and body, then delivered", async () => {
    const { store, receiver, webhook, deliverer, setNow } = await setup();
    receiver.answer({ status: 500, body: "try later" });
    await emitKeyEvent(store, "key.created", KEY, new Date(T0));
    const [first] = await deliverer.deliverDue();
    expect(first).toMatchObject({ status: 500, state: "pending" });
    setNow(T0 + FIRST_RETRY_MS - 1);
    expect(await deliverer.deliverDue()).toEqual([]);
    setNow(T0 + FIRST_RETRY_MS);
    expect(FIRST_RETRY_MS).toBeLessThanOrEqual(60_000);
    const [second] = await deliverer.deliverDue();
    expect(second).toMatchObject({ status: 200, state: "delivered", attempt: 2 });
    const [a, b] = receiver.received;
    expect(b!.headers["webhook-id"]).toBe(a!.headers["webhook-id"]!);
    expect(b!.body).toBe(a!.body);
    expect(b!.signatureValid).toBe(true);
    // The retry is signed at its own time.
    expect(b!.headers["webhook-timestamp"]).toBe(String((T0 + FIRST_RETRY_MS) / 1000));
    const [record] = await store.webhooks.listDeliveries(webhook.id, 10);
    expect(record!.attempts.map((x) => [x.attempt, x.status, x.response])).toEqual([
      [1, 500, "try later"],
      [2, 200, "ok"],
    ]);
  });

  test("a receiver that goes away and a sender that restarts: the outbox keeps the event until it is delivered", async () => {
    const first = await setup();
    await first.receiver.stop();
    await emitKeyEvent(first.store, "key.revoked", KEY, new Date(T0));
    const [refused] = await first.deliverer.deliverDue();
    expect(refused).toMatchObject({ status: null, state: "pending", error: expect.stringMatching(/refused|connect/) });
    // The sender stops (its store closes), then starts again on the same file.
    await first.store.close();
    const store = SqliteStore.open(first.path);
    cleanups.push(() => store.close());
    first.receiver.start();
    let now = T0 + FIRST_RETRY_MS;
    const deliverer = new Deliverer({ store, now: () => now });
    const [again] = await deliverer.deliverDue();
    expect(again).toMatchObject({ status: 200, state: "delivered", attempt: 2 });
    expect(first.receiver.received).toHaveLength(1);
    expect(first.receiver.received[0]!.signatureValid).toBe(true);
    now += RETRY_FOR_MS;
    expect(await deliverer.deliverDue()).toEqual([]);
  });

  test("a sender that dies holding a claim: another takes the delivery over once the lease has run out", async () => {
    const { store, receiver, deliverer, setNow } = await setup();
    await emitKeyEvent(store, "key.created", KEY, new Date(T0));
    // Claimed, never finished (the process died).
    expect(await store.webhooks.claimDeliveries({ limit: 10, nowMs: T0, leaseMs: LEASE_MS })).toHaveLength(1);
    expect(await deliverer.deliverDue()).toEqual([]);
    setNow(T0 + LEASE_MS);
    expect((await deliverer.deliverDue()).map((r) => r.state)).toEqual(["delivered"]);
    expect(receiver.received).toHaveLength(1);
  });

  test("backoff doubles, and 24 hours after the event a failing delivery is given up", async () => {
    const { store, receiver, webhook, deliverer, setNow } = await setup();
    receiver.answer(...Array.from({ length: 40 }, () => ({ status: 503 })));
    await emitKeyEvent(store, "key.created", KEY, new Date(T0));
    const times: number[] = [];
    let now = T0;
    for (let i = 0; i < 40; i++) {
      setNow(now);
      const [report] = await deliverer.deliverDue();
      if (!report) break;
      times.push(now - T0);
      if (report.state === "failed") break;
      const [record] = await store.webhooks.listDeliveries(webhook.id, 1);
      now = Date.parse(record!.nextAttemptAt!);
    }
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    expect(gaps.slice(0, 4)).toEqual([30_000, 60_000, 120_000, 240_000]);
    expect(times.at(-1)).toBe(RETRY_FOR_MS);
    const [record] = await store.webhooks.listDeliveries(webhook.id, 1);
    expect(record!.state).toBe("failed");
    expect(record!.attempts).toHaveLength(times.length);
    expect(times.length).toBeGreaterThan(10);
  });

  test("redirects are not followed; only the first 256 bytes of an answer are kept", async () => {
    const { store, receiver, webhook, deliverer, setNow } = await setup();
    receiver.answer({ status: 302, headers: { location: "/elsewhere" } }, { status: 200, body: "é".repeat(300) });
    await emitKeyEvent(store, "key.created", KEY, new Date(T0));
    expect((await deliverer.deliverDue())[0]).toMatchObject({ status: 302, state: "pending" });
    expect(receiver.received.map((r) => r.path)).toEqual(["/hook"]);
    setNow(T0 + FIRST_RETRY_MS);
    await deliverer.deliverDue();
    const [record] = await store.webhooks.listDeliveries(webhook.id, 1);
    const kept = record!.attempts[1]!.response!;
    expect(Buffer.byteLength(kept)).toBeLessThanOrEqual(256 + 2);
    expect(kept.startsWith("é".repeat(128))).toBe(true);
    expect(kept.length).toBe(128);
  });

  test("a receiver that does not answer in time: the attempt ends, recorded as no answer", async () => {
    const { store, receiver, webhook } = await setup();
    receiver.answer({ status: 200, delayMs: 3000 });
    const deliverer = new Deliverer({ store, now: () => T0, timeoutMs: 300 });
    await emitKeyEvent(store, "key.created", KEY, new Date(T0));
    const [report] = await deliverer.deliverDue();
    expect(report).toMatchObject({ status: null, state: "pending", error: "no answer within 0.3 s" });
    expect((await store.webhooks.listDeliveries(webhook.id, 1))[0]!.attempts[0]!.error).toBe("no answer within 0.3 s");
  });

  test("a 2xx whose body never ends is delivered at once, with what came of the body; the connection is closed", async () => {
    const { store } = await setup();
    const stuck = new StuckReceiver("HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 1000\r\n\r\nthanks, more to come");
    cleanups.push(async () => stuck.stop());
    const hook = (await store.webhooks.createWebhook(stuck.url, ["key.rotated"])).webhook;
    await emitKeyEvent(store, "key.rotated", KEY, new Date(T0));
    const deliverer = new Deliverer({ store, now: () => T0, timeoutMs: 5000 });
    const [report] = await deliverer.deliverDue();
    expect(report).toMatchObject({ status: 200, state: "delivered", response: "thanks, more to come", error: null });
    expect(report!.durationMs).toBeLessThan(4000);
    const [record] = await store.webhooks.listDeliveries(hook.id, 1);
    expect(record).toMatchObject({ state: "delivered", attempts: [{ attempt: 1, status: 200, response: "thanks, more to come", error: null }] });
    const deadline = performance.now() + 2000;
    while (stuck.open.size > 0 && performance.now() < deadline) await Bun.sleep(20);
    expect(stuck.open.size).toBe(0);
  });

  test("no secret in a delivery's body or the log: not the webhook's, not a key's", async () => {
    const { store, receiver, deliverer, lines, secret, setNow } = await setup();
    const issued = await store.createKey("acme", "free");
    receiver.answer({ status: 500 });
    await emitKeyEvent(store, "key.created", issued.key, new Date(T0));
    await deliverer.deliverDue();
    setNow(T0 + FIRST_RETRY_MS);
    await deliverer.deliverDue();
    const everything = [...receiver.received.map((r) => r.body), ...lines].join("\n");
    expect(lines.length).toBeGreaterThanOrEqual(2);
    for (const hidden of [secret, secret.slice(6), issued.secret]) expect(everything).not.toContain(hidden);
    expect(lines.join("\n")).not.toContain(receiver.url);
  });
});


describe("a running deliverer", () => {
  test("sends a backlog larger than its slots without waiting for the timer, and stops promptly", async () => {
    const { store, receiver } = await setup();
    for (let i = 0; i < 50; i++) await emitKeyEvent(store, "key.created", { ...KEY, name: `k${i}` }, new Date(T0));
    const deliverer = new Deliverer({ store, now: () => T0 });
    const began = performance.now();
    deliverer.start(60_000);
    await receiver.waitFor(50);
    // More is claimed as each attempt ends; with a minute between looks this would take minutes.
    expect(performance.now() - began).toBeLessThan(20_000);
    await deliverer.stop();
    expect(new Set(receiver.received.map((r) => r.headers["webhook-id"])).size).toBe(50);
  });

  test("stopping does not wait for a claim the store never answers (a database gone silent)", async () => {
    const { store } = await setup();
    let claims = 0;
    const webhooks = new Proxy(store.webhooks, {
      get: (target, property) =>
        property === "claimDeliveries"
          ? () => {
              claims++;
              return new Promise(() => {});
            }
          : Reflect.get(target, property, target),
    });
    const silent = new Proxy(store, { get: (target, property) => (property === "webhooks" ? webhooks : Reflect.get(target, property, target)) });
    const deliverer = new Deliverer({ store: silent, now: () => T0 });
    deliverer.start(60_000);
    while (claims === 0) await Bun.sleep(10);
    const began = performance.now();
    await deliverer.stop(5000);
    // Nothing is being recorded: nothing to wait for, however long the grace.
    expect(performance.now() - began).toBeLessThan(2000);
  });

  test("stopping cuts an attempt waiting for an answer short: nothing is recorded, and after its lease the delivery is sent again", async () => {
    const { store } = await setup();
    const stuck = new StuckReceiver();
    cleanups.push(async () => stuck.stop());
    const silent = (await store.webhooks.createWebhook(stuck.url, ["key.rotated"])).webhook;
    await emitKeyEvent(store, "key.rotated", KEY, new Date(T0));
    const deliverer = new Deliverer({ store, now: () => T0 });
    deliverer.start(60_000);
    while (stuck.open.size === 0) await Bun.sleep(10);
    const began = performance.now();
    await deliverer.stop(5000);
    expect(performance.now() - began).toBeLessThan(1000);
    const [cut] = await store.webhooks.listDeliveries(silent.id, 1);
    expect(cut).toMatchObject({ state: "pending", attempts: [] });
    const again = await store.webhooks.claimDeliveries({ limit: 10, nowMs: T0 + LEASE_MS, leaseMs: LEASE_MS });
    expect(again.map((d) => [d.webhookId, d.attempt])).toEqual([[silent.id, 1]]);
  });
});

describe("a state store it cannot use", () => {
  test("a state file removed or replaced under the server is not warned of again (the server has said so); another failure is", async () => {
    for (const [error, warned] of [
      [new StateFileChangedError("/srv/state.db was replaced by another file while in use"), false],
      [new StoreUnavailableError("the state store cannot be reached"), true],
    ] as const) {
      const { store, deliverer, lines } = await setup();
      spyOn(store.webhooks, "claimDeliveries").mockImplementation(() => Promise.reject(error));
      deliverer.start(20);
      await Bun.sleep(100);
      await deliverer.stop();
      expect(lines.some((line) => line.includes("webhook deliveries could not be read or recorded"))).toBe(warned);
    }
  });
});

import { afterEach, expect, test } from "bun:test";
import { Deliverer, PER_WEBHOOK } from "../../src/events/deliverer.ts";
import { emitKeyEvent } from "../../src/events/emit.ts";
import { FIRST_RETRY_MS } from "../../src/events/retry-schedule.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { tempStatePaths } from "../store/temp-state.ts";
import { StuckReceiver } from "../support/stuck-receiver.ts";
import { WebhookReceiver } from "../support/webhook-receiver.ts";

/**
 * A running deliverer with a receiver that never answers beside one that answers at
 * once. Its clock runs SPEED times as fast as real time and an attempt times out after
 * a real second (ten seconds of that clock, as ATTEMPT_TIMEOUT_MS), so the retry
 * schedule is followed in seconds.
 */
const freshPath = tempStatePaths();
const T0 = Date.UTC(2026, 11, 1, 12, 0, 0);
const SPEED = 10;
const TIMEOUT_MS = 1000;

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function until(done: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await done())) {
    if (performance.now() > deadline) throw new Error(`not within ${timeoutMs} ms`);
    await Bun.sleep(50);
  }
}

test("a receiver that never answers holds only its share: the other webhook's deliveries go out at once, and its own first retries come on schedule", async () => {
  const store = SqliteStore.open(freshPath());
  cleanups.push(() => store.close());
  const stuck = new StuckReceiver();
  cleanups.push(() => stuck.stop());
  let secret = "";
  const healthy = new WebhookReceiver(() => secret).start();
  cleanups.push(() => healthy.stop());
  const hanging = (await store.webhooks.createWebhook(stuck.url, ["key.created"])).webhook;
  const answering = await store.webhooks.createWebhook(healthy.url, ["key.created", "key.revoked"]);
  secret = answering.secret;
  // 32 events for both webhooks, among 96 for the answering one alone.
  for (let i = 0; i < 32; i++) {
    await emitKeyEvent(store, "key.created", { id: `key_created${i}`, name: `k${i}`, plan: "free" }, new Date(T0));
    for (let j = 0; j < 3; j++) await emitKeyEvent(store, "key.revoked", { id: `key_revoked${i}_${j}`, name: `r${i}`, plan: "free" }, new Date(T0));
  }
  const began = performance.now();
  const deliverer = new Deliverer({ store, now: () => T0 + Math.round((performance.now() - began) * SPEED), timeoutMs: TIMEOUT_MS });
  cleanups.push(() => deliverer.stop());
  deliverer.start(100);

  // All 128 at once, not a batch at a time behind the stuck receiver's timeouts (which
  // took ten seconds).
  await healthy.waitFor(128, 5000);
  expect(new Set(healthy.received.map((r) => r.headers["webhook-id"])).size).toBe(128);
  expect(healthy.received.every((r) => r.signatureValid)).toBe(true);

  // Each of the stuck receiver's deliveries is tried again 30 s after its first attempt
  // ended, within a minute of it (the first retry: CONTRACT §16), not behind the others.
  const log = () => store.webhooks.listDeliveries(hanging.id, 100);
  await until(async () => (await log()).every((d) => d.attempts.length >= 2), 15_000);
  const deliveries = await log();
  expect(deliveries).toHaveLength(32);
  for (const delivery of deliveries) {
    const [first, second] = delivery.attempts.map((a) => Date.parse(a.at));
    expect(second! - first!).toBeGreaterThanOrEqual(FIRST_RETRY_MS);
    expect(second! - first!).toBeLessThanOrEqual(60_000);
  }
  // Its share: the first attempts began PER_WEBHOOK at a time.
  const firstRound = deliveries.filter((d) => Date.parse(d.attempts[0]!.at) < T0 + (TIMEOUT_MS * SPEED) / 2);
  expect(firstRound).toHaveLength(PER_WEBHOOK);
}, 30_000);

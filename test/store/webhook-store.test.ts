import { describe, expect, test } from "bun:test";
import { eventBody } from "../../src/events/event-types.ts";
import { emitExpiringKeys, expiringView } from "../../src/events/emit.ts";
import { thresholdOnceKey } from "../../src/events/usage-thresholds.ts";
import { webhookUrlError } from "../../src/events/webhook-url.ts";
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { downgradeSqlite } from "./downgrade.ts";
import { openStore } from "../../src/store/open-store.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import type { Store } from "../../src/store/store.ts";
import { DuplicateWebhookError } from "../../src/store/webhook-ids.ts";
import { postgresAvailable, testStates } from "../support/postgres.ts";
import { tempStatePaths } from "./temp-state.ts";

/**
 * The webhook part of the Store (WebhookStore) on SQLite and PostgreSQL: webhooks,
 * the outbox, claims with leases, the attempt log, and usage.threshold recorded in
 * the charge's own transaction.
 */
const freshPath = tempStatePaths();
const states = testStates();
const PERIOD = "2026-11";
const T0 = Date.UTC(2026, 10, 25, 8, 0, 0);

/**
 * `fresh`: a new state's location. `reuseDeliveryIds`: makes the state's next delivery
 * take `id` again, as a state replaced under a running server may: SQLite's rowid starts
 * again at 1 in a table emptied by `state copy --replace`; PostgreSQL's identity is set
 * back by `pg_restore` of an older backup.
 */
function webhookSuite(fresh: () => Promise<string>, reuseDeliveryIds: (location: string, id: number) => Promise<void>) {
  const open = async (): Promise<Store> => openStore(await fresh(), { clock: () => new Date(T0) });
  const event = (id: string, type = "key.created", extra: { onceKey?: string; webhookId?: string } = {}) => ({
    id,
    type,
    body: eventBody(type, { n: id }, new Date(T0)),
    createdAt: new Date(T0).toISOString(),
    ...extra,
  });

  test("a webhook: id, secret once, events as given; listed without its secret; removed", async () => {
    const store = await open();
    const { webhook, secret } = await store.webhooks.createWebhook("http://127.0.0.1:9/hook", ["usage.threshold", "key.created"]);
    expect(webhook).toEqual({ id: expect.stringMatching(/^wh_[a-z2-7]{16}$/), url: "http://127.0.0.1:9/hook", events: ["usage.threshold", "key.created"], createdAt: new Date(T0).toISOString() });
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(await store.webhooks.listWebhooks()).toEqual([webhook]);
    expect(JSON.stringify(await store.webhooks.listWebhooks())).not.toContain(secret);
    expect(await store.webhooks.getWebhook(webhook.id)).toEqual(webhook);
    expect(await store.webhooks.removeWebhook(webhook.id)).toBe(true);
    expect(await store.webhooks.removeWebhook(webhook.id)).toBe(false);
    expect(await store.webhooks.listWebhooks()).toEqual([]);
    await store.close();
  });

  test("keys made on one server while another removes webhooks: a webhook removed meanwhile gets no delivery, every other one gets its own, and no change fails", async () => {
    const location = await fresh();
    const [creating, removing] = [await openStore(location, { clock: () => new Date(T0) }), await openStore(location, { clock: () => new Date(T0) })];
    // Never removed: every key.created must reach it.
    const kept = (await removing.webhooks.createWebhook("http://127.0.0.1:9/kept", ["key.created"])).webhook;
    const made: string[] = [];
    for (let round = 0; round < 8; round++) {
      const doomed: string[] = [];
      for (let i = 0; i < 8; i++) doomed.push((await removing.webhooks.createWebhook(`http://127.0.0.1:9/r${round}-${i}`, ["key.created"])).webhook.id);
      const keys = Array.from({ length: 8 }, (_, i) =>
        creating.createKey(`k${round}-${i}`, "free", undefined, (issued) => ({
          entry: { at: new Date(T0).toISOString(), actor: "cli", action: "key.created", target: issued.key.id, changes: {} },
          events: [event(`msg_${round}_${i}`)],
        })),
      );
      const removals = doomed.map((id) => removing.webhooks.removeWebhook(id));
      const outcomes = await Promise.allSettled([...keys, ...removals]);
      expect(outcomes.filter((outcome) => outcome.status === "rejected").map((outcome) => String((outcome as PromiseRejectedResult).reason))).toEqual([]);
      for (const outcome of outcomes.slice(0, keys.length)) made.push(((outcome as PromiseFulfilledResult<{ key: { id: string } }>).value).key.id);
    }
    expect(made).toHaveLength(64);
    expect(await removing.webhooks.listWebhooks()).toEqual([kept]);
    // Each key's event went to the webhook kept, once; none is due to a webhook that is gone.
    const deliveries = await creating.webhooks.listDeliveries(kept.id, 1000);
    expect(deliveries.map((delivery) => delivery.eventId).sort()).toEqual(Array.from({ length: 64 }, (_, n) => `msg_${Math.floor(n / 8)}_${n % 8}`).sort());
    const due = await creating.webhooks.claimDeliveries({ limit: 1000, nowMs: T0, leaseMs: 60_000 });
    expect(due).toHaveLength(64);
    expect(new Set(due.map((delivery) => delivery.webhookId))).toEqual(new Set([kept.id]));
    await creating.close();
    await removing.close();
  }, 60_000);

  test("an event gets one delivery per subscribed webhook; claimed once until its lease runs out", async () => {
    const store = await open();
    const a = (await store.webhooks.createWebhook("http://127.0.0.1:9/a", ["key.created"])).webhook;
    const b = (await store.webhooks.createWebhook("http://127.0.0.1:9/b", ["key.revoked"])).webhook;
    expect(await store.webhooks.addEvent(event("msg_1"))).toBe(true);
    const [claimed, ...rest] = await store.webhooks.claimDeliveries({ limit: 10, nowMs: T0, leaseMs: 60_000 });
    expect(rest).toEqual([]);
    expect(claimed).toMatchObject({ attempt: 1, webhookId: a.id, eventId: "msg_1", eventType: "key.created", url: "http://127.0.0.1:9/a" });
    expect(claimed!.secret).toMatch(/^whsec_/);
    // Leased: nobody else gets it; after the lease, someone does.
    expect(await store.webhooks.claimDeliveries({ limit: 10, nowMs: T0 + 59_999, leaseMs: 60_000 })).toEqual([]);
    expect(await store.webhooks.claimDeliveries({ limit: 10, nowMs: T0 + 60_000, leaseMs: 60_000 })).toHaveLength(1);
    expect(await store.webhooks.listDeliveries(b.id, 10)).toEqual([]);
    await store.close();
  });

  test("a claim takes no more of a webhook than its share, counting those in flight; a webhook at its share gets none, and the others' deliveries behind its own are claimed", async () => {
    const store = await open();
    const a = (await store.webhooks.createWebhook("http://127.0.0.1:9/a", ["key.created"])).webhook;
    const b = (await store.webhooks.createWebhook("http://127.0.0.1:9/b", ["key.revoked"])).webhook;
    for (let i = 1; i <= 5; i++) await store.webhooks.addEvent(event(`msg_a${i}`));
    for (let i = 1; i <= 2; i++) await store.webhooks.addEvent(event(`msg_b${i}`, "key.revoked"));
    const claim = (limit: number, perWebhook?: { limit: number; inFlight: Record<string, number> }) =>
      store.webhooks.claimDeliveries({ limit, nowMs: T0, leaseMs: 60_000, perWebhook }).then((due) => due.map((d) => d.eventId));
    expect(await claim(3, { limit: 2, inFlight: {} })).toEqual(["msg_a1", "msg_a2"]);
    expect(await claim(3, { limit: 2, inFlight: { [a.id]: 2 } })).toEqual(["msg_b1", "msg_b2"]);
    expect(await claim(10, { limit: 3, inFlight: { [a.id]: 2, [b.id]: 2 } })).toEqual(["msg_a3"]);
    expect(await claim(10)).toEqual(["msg_a4", "msg_a5"]);
    await store.close();
  });

  test("servers claiming at once, each within its shares, never claim one delivery twice", async () => {
    const location = await fresh();
    const [one, two] = [await openStore(location, { clock: () => new Date(T0) }), await openStore(location, { clock: () => new Date(T0) })];
    await one.webhooks.createWebhook("http://127.0.0.1:9/a", ["key.created"]);
    await one.webhooks.createWebhook("http://127.0.0.1:9/b", ["key.created"]);
    for (let i = 0; i < 40; i++) await one.webhooks.addEvent(event(`msg_${i}`));
    const claimAll = async (store: Store) => {
      const ids: number[] = [];
      for (;;) {
        const due = await store.webhooks.claimDeliveries({ limit: 7, nowMs: T0, leaseMs: 60_000, perWebhook: { limit: 3, inFlight: {} } });
        if (due.length === 0) return ids;
        ids.push(...due.map((d) => d.deliveryId));
      }
    };
    const [mine, theirs] = await Promise.all([claimAll(one), claimAll(two)]);
    const all = [...mine!, ...theirs!];
    expect(all).toHaveLength(80);
    expect(new Set(all).size).toBe(80);
    await one.close();
    await two.close();
  });

  test("attempts are logged once; pending until the next try, then delivered", async () => {
    const store = await open();
    const hook = (await store.webhooks.createWebhook("http://127.0.0.1:9/a", ["key.created"])).webhook;
    await store.webhooks.addEvent(event("msg_2"));
    const [first] = await store.webhooks.claimDeliveries({ limit: 10, nowMs: T0, leaseMs: 60_000 });
    const failed = { deliveryId: first!.deliveryId, eventId: first!.eventId, webhookId: first!.webhookId, attempt: 1, at: new Date(T0).toISOString(), status: 500, durationMs: 12, response: "oops", error: null };
    expect(await store.webhooks.recordAttempt({ ...failed, state: "pending", nextAttemptAt: T0 + 30_000 })).toBe(true);
    // The same attempt again (a second sender whose lease ran out): refused, nothing changes.
    expect(await store.webhooks.recordAttempt({ ...failed, state: "delivered", nextAttemptAt: null })).toBe(false);
    expect(await store.webhooks.claimDeliveries({ limit: 10, nowMs: T0 + 29_999, leaseMs: 60_000 })).toEqual([]);
    const [second] = await store.webhooks.claimDeliveries({ limit: 10, nowMs: T0 + 30_000, leaseMs: 60_000 });
    expect(second!.attempt).toBe(2);
    await store.webhooks.recordAttempt({ deliveryId: second!.deliveryId, eventId: second!.eventId, webhookId: second!.webhookId, attempt: 2, at: new Date(T0 + 30_000).toISOString(), status: null, durationMs: 3, response: null, error: "connection refused", state: "pending", nextAttemptAt: T0 + 90_000 });
    const [third] = await store.webhooks.claimDeliveries({ limit: 10, nowMs: T0 + 90_000, leaseMs: 60_000 });
    await store.webhooks.recordAttempt({ deliveryId: third!.deliveryId, eventId: third!.eventId, webhookId: third!.webhookId, attempt: 3, at: new Date(T0 + 90_000).toISOString(), status: 204, durationMs: 4, response: "", error: null, state: "delivered", nextAttemptAt: null });
    const [record] = await store.webhooks.listDeliveries(hook.id, 10);
    expect(record).toMatchObject({ eventId: "msg_2", eventType: "key.created", state: "delivered", nextAttemptAt: null });
    expect(record!.attempts.map((a) => [a.attempt, a.status, a.error])).toEqual([
      [1, 500, null],
      [2, null, "connection refused"],
      [3, 204, null],
    ]);
    expect(await store.webhooks.claimDeliveries({ limit: 10, nowMs: T0 + 10 * 86_400_000, leaseMs: 60_000 })).toEqual([]);
    await store.close();
  });

  test("an attempt on a delivery that was replaced meanwhile by another of the same id (a state copy --replace, a restore) records nothing on the new one", async () => {
    const location = await fresh();
    const store = await openStore(location, { clock: () => new Date(T0) });
    const hook = (await store.webhooks.createWebhook("http://127.0.0.1:9/a", ["key.created"])).webhook;
    await store.webhooks.addEvent(event("msg_before"));
    const [sending] = await store.webhooks.claimDeliveries({ limit: 10, nowMs: T0, leaseMs: 60_000 });
    // While it is being sent, the state is replaced by one that holds the webhook and no outbox.
    await store.importState(await store.exportState(), { replace: true });
    await reuseDeliveryIds(location, sending!.deliveryId);
    await store.webhooks.addEvent(event("msg_after"));
    const [next] = await store.webhooks.claimDeliveries({ limit: 10, nowMs: T0, leaseMs: 60_000 });
    expect({ eventId: next!.eventId, deliveryId: next!.deliveryId }).toEqual({ eventId: "msg_after", deliveryId: sending!.deliveryId });
    const outcome = (due: typeof sending, status: number) => ({
      deliveryId: due!.deliveryId,
      eventId: due!.eventId,
      webhookId: due!.webhookId,
      attempt: due!.attempt,
      at: new Date(T0).toISOString(),
      status,
      durationMs: 5,
      response: "",
      error: null,
      state: status === 200 ? ("delivered" as const) : ("pending" as const),
      nextAttemptAt: status === 200 ? null : T0 + 30_000,
    });
    expect(await store.webhooks.recordAttempt(outcome(sending, 500))).toBe(false);
    const [untouched] = await store.webhooks.listDeliveries(hook.id, 10);
    expect(untouched).toMatchObject({ eventId: "msg_after", state: "pending", attempts: [] });
    // Still leased to its own sender, whose outcome is the one recorded.
    expect(await store.webhooks.claimDeliveries({ limit: 10, nowMs: T0 + 30_000, leaseMs: 60_000 })).toEqual([]);
    expect(await store.webhooks.recordAttempt(outcome(next, 200))).toBe(true);
    const [recorded] = await store.webhooks.listDeliveries(hook.id, 10);
    expect(recorded).toMatchObject({ eventId: "msg_after", state: "delivered", attempts: [{ attempt: 1, status: 200 }] });
    await store.close();
  });

  test("a once key records its event once; a webhook-only event reaches that webhook alone", async () => {
    const store = await open();
    const a = (await store.webhooks.createWebhook("http://127.0.0.1:9/a", ["key.expiring"])).webhook;
    const b = (await store.webhooks.createWebhook("http://127.0.0.1:9/b", ["key.expiring"])).webhook;
    expect(await store.webhooks.addEvent(event("msg_3", "key.expiring", { onceKey: "x" }))).toBe(true);
    expect(await store.webhooks.addEvent(event("msg_4", "key.expiring", { onceKey: "x" }))).toBe(false);
    expect(await store.webhooks.addEvent(event("msg_5", "webhook.test", { webhookId: b.id }))).toBe(true);
    expect((await store.webhooks.listDeliveries(a.id, 10)).map((d) => d.eventId)).toEqual(["msg_3"]);
    expect((await store.webhooks.listDeliveries(b.id, 10)).map((d) => d.eventId)).toEqual(["msg_5", "msg_3"]);
    await store.close();
  });

  test("usage.threshold: 80%, 90% and 100% once each, in the charge's transaction; unlimited keys never", async () => {
    const store = await open();
    const hook = (await store.webhooks.createWebhook("http://127.0.0.1:9/a", ["usage.threshold"])).webhook;
    const { key } = await store.createKey("acme", "free");
    const charge = (units: number, limit: number | null = 10) => store.charge({ keyId: key.id, period: PERIOD, units, limit, at: T0 });
    await charge(7); // 70%
    expect(await store.webhooks.listDeliveries(hook.id, 10)).toEqual([]);
    await charge(1); // 80%: exactly on the line
    await charge(3); // refused: does not fit, crosses nothing
    await charge(2); // 100%, past 90% in the same charge
    await charge(1); // refused
    const bodies = (await store.webhooks.claimDeliveries({ limit: 10, nowMs: T0, leaseMs: 1000 })).map((d) => JSON.parse(d.body));
    expect(bodies.map((b) => b.data.threshold).sort()).toEqual([100, 80, 90]);
    const eighty = bodies.find((b) => b.data.threshold === 80);
    expect(eighty).toEqual({
      type: "usage.threshold",
      timestamp: new Date(T0).toISOString(),
      data: { key: { id: key.id, name: "acme", plan: "free" }, period: PERIOD, threshold: 80, units: { used: 8, limit: 10 } },
    });
    const other = await store.createKey("other", "free");
    await store.charge({ keyId: other.key.id, period: PERIOD, units: 1000, limit: null });
    expect(await store.webhooks.listDeliveries(hook.id, 10)).toHaveLength(3);
    await store.close();
  });

  test("concurrent charges of one key cross each line once", async () => {
    const store = await open();
    const hook = (await store.webhooks.createWebhook("http://127.0.0.1:9/a", ["usage.threshold"])).webhook;
    const { key } = await store.createKey("busy", "free");
    await Promise.all(Array.from({ length: 200 }, () => store.charge({ keyId: key.id, period: PERIOD, units: 1, limit: 150 })));
    expect(await store.unitsUsed(key.id, PERIOD)).toBe(150);
    expect(await store.webhooks.listDeliveries(hook.id, 10)).toHaveLength(3);
    const lines = (await store.webhooks.claimDeliveries({ limit: 10, nowMs: Date.now() + 1000, leaseMs: 1000 })).map((d) => JSON.parse(d.body).data);
    expect(lines.map((data) => [data.threshold, data.units.used]).sort((x, y) => x[0] - y[0])).toEqual([
      [80, 120],
      [90, 135],
      [100, 150],
    ]);
    await store.close();
  });

  test("a snapshot carries webhooks with their secrets, not their outbox; replace empties the webhook tables", async () => {
    const store = await open();
    const issued = await store.webhooks.createWebhook("https://hooks.example.com/a", ["key.created", "data.updated"]);
    await store.webhooks.addEvent(event("msg_7"));
    const snapshot = await store.exportState();
    expect(snapshot.webhooks).toEqual([{ ...issued.webhook, secret: issued.secret }]);
    const copy = await open();
    await copy.importState(snapshot);
    expect(await copy.webhooks.listWebhooks()).toEqual([issued.webhook]);
    expect(await copy.webhooks.listDeliveries(issued.webhook.id, 10)).toEqual([]);
    // Replaced by a snapshot without webhooks: none left, nor their deliveries.
    await store.importState({ ...snapshot, webhooks: [] }, { replace: true });
    expect(await store.webhooks.listWebhooks()).toEqual([]);
    expect(await store.webhooks.claimDeliveries({ limit: 10, nowMs: T0 + 1000, leaseMs: 1 })).toEqual([]);
    // A snapshot with a bad webhook is refused whole.
    const bad = { ...snapshot, keys: [], usage: [], days: [], adminTokens: [], webhooks: [{ ...issued.webhook, secret: "nope" }] };
    await expect(copy.importState(bad, { replace: true })).rejects.toThrow("no valid signing secret");
    expect(await copy.webhooks.listWebhooks()).toEqual([issued.webhook]);
    await store.close();
    await copy.close();
  });

  test("a URL another webhook has already (as URL() reads it) is refused, naming that webhook, and nothing is written", async () => {
    const store = await open();
    const first = (await store.webhooks.createWebhook("http://127.0.0.1:9/a", ["key.created"])).webhook;
    for (const url of ["http://127.0.0.1:9/a", "HTTP://127.0.0.1:9/a"]) {
      const refused = store.webhooks.createWebhook(url, ["key.revoked"], () => ({ entry: { at: new Date(T0).toISOString(), actor: "cli", action: "webhook.created", target: "x", changes: {} } }));
      await expect(refused).rejects.toBeInstanceOf(DuplicateWebhookError);
      await expect(refused).rejects.toThrow(`the webhook ${first.id} has this URL already`);
    }
    // Two at once: one of them is added.
    const raced = await Promise.allSettled([store.webhooks.createWebhook("http://127.0.0.1:9/b", ["key.created"]), store.webhooks.createWebhook("http://127.0.0.1:9/b", ["key.created"])]);
    expect(raced.map((outcome) => outcome.status).sort()).toEqual(["fulfilled", "rejected"]);
    expect((await store.webhooks.listWebhooks()).map((webhook) => webhook.url)).toEqual(["http://127.0.0.1:9/a", "http://127.0.0.1:9/b"]);
    expect(await store.listAudit("2000-01-01T00:00:00.000Z", "2100-01-01T00:00:00.000Z", 10)).toEqual([]);
    await store.close();
  });

  test("a URL a state holds with an empty query or fragment, or a plain letter percent-encoded, is the receiver it names: its other spellings are refused", async () => {
    const store = await open();
    // Stored as a state may hold them from before such URLs were refused.
    const withQuery = (await store.webhooks.createWebhook("http://127.0.0.1:9/sp?", ["key.created"])).webhook;
    const withHash = (await store.webhooks.createWebhook("http://127.0.0.1:9/h?#", ["key.created"])).webhook;
    const encoded = (await store.webhooks.createWebhook("http://127.0.0.1:9/%78?q=%7e", ["key.created"])).webhook;
    for (const [url, existing] of [
      ["http://127.0.0.1:9/sp", withQuery],
      ["http://127.0.0.1:9/%73p#", withQuery],
      ["http://127.0.0.1:9/h", withHash],
      ["http://127.0.0.1:9/x?q=~", encoded],
      ["http://127.0.0.1:9/%78?q=%7E", encoded],
    ] as const) {
      const refused = store.webhooks.createWebhook(url, ["key.revoked"]);
      await expect(refused).rejects.toBeInstanceOf(DuplicateWebhookError);
      await expect(refused).rejects.toThrow(`the webhook ${existing.id} has this URL already`);
    }
    // A non-empty query, or another path, is another receiver.
    await store.webhooks.createWebhook("http://127.0.0.1:9/sp?a", ["key.created"]);
    await store.webhooks.createWebhook("http://127.0.0.1:9/x/", ["key.created"]);
    expect(await store.webhooks.listWebhooks()).toHaveLength(5);
    await store.close();
  });

  test("a snapshot carries the events told once (key.expiring, usage.threshold), without deliveries: the copy tells none again", async () => {
    const store = await open();
    const told = await tellOnce(store);
    const snapshot = await store.exportState();
    expect(snapshot.onceEvents!.map((e) => e.type).sort()).toEqual(["key.expiring", "usage.threshold"]);
    const copy = await open();
    await copy.importState(snapshot);
    await expectToldAlready(copy, told);
    expect((await copy.exportState()).onceEvents).toEqual(snapshot.onceEvents!);
    // Replacing a store's state replaces its once events too; a bad one is refused whole.
    await copy.importState({ ...snapshot, onceEvents: [] }, { replace: true });
    expect((await copy.exportState()).onceEvents).toEqual([]);
    const bad = { ...snapshot, onceEvents: [{ ...snapshot.onceEvents![0]!, createdAt: "yesterday" }] };
    await expect(copy.importState(bad, { replace: true })).rejects.toThrow("not an ISO 8601 UTC time");
    await store.close();
    await copy.close();
  });

  test("pruning forgets delivered and failed deliveries of old events, keeps pending ones and newer events", async () => {
    const store = await open();
    const hook = (await store.webhooks.createWebhook("http://127.0.0.1:9/a", ["key.created"])).webhook;
    const at = (ms: number, id: string) => ({ ...event(id), body: eventBody("key.created", {}, new Date(ms)), createdAt: new Date(ms).toISOString() });
    await store.webhooks.addEvent(at(T0, "msg_old_done"));
    await store.webhooks.addEvent(at(T0 + 1, "msg_old_pending"));
    await store.webhooks.addEvent(at(T0 + 10 * 86_400_000, "msg_new_done"));
    for (const due of await store.webhooks.claimDeliveries({ limit: 10, nowMs: T0 + 20 * 86_400_000, leaseMs: 1000 })) {
      if (due.eventId === "msg_old_pending") continue;
      await store.webhooks.recordAttempt({ deliveryId: due.deliveryId, eventId: due.eventId, webhookId: due.webhookId, attempt: 1, at: new Date(T0).toISOString(), status: 200, durationMs: 1, response: "", error: null, state: "delivered", nextAttemptAt: null });
    }
    expect(await store.webhooks.pruneOutbox(new Date(T0 + 86_400_000).toISOString())).toBe(1);
    expect((await store.webhooks.listDeliveries(hook.id, 10)).map((d) => d.eventId).sort()).toEqual(["msg_new_done", "msg_old_pending"]);
    await store.close();
  });

  test("removing a webhook drops its pending deliveries", async () => {
    const store = await open();
    const hook = (await store.webhooks.createWebhook("http://127.0.0.1:9/a", ["key.created"])).webhook;
    await store.webhooks.addEvent(event("msg_6"));
    await store.webhooks.removeWebhook(hook.id);
    expect(await store.webhooks.claimDeliveries({ limit: 10, nowMs: T0, leaseMs: 1000 })).toEqual([]);
    await store.close();
  });
}

/**
 * On `store`: a webhook of key.expiring and usage.threshold, a key expiring 3 days after
 * T0 told by the sweep, and a key past 80% of its units; both deliveries delivered.
 */
async function tellOnce(store: Store): Promise<{ keyId: string; webhookId: string }> {
  const hook = (await store.webhooks.createWebhook("http://127.0.0.1:9/once", ["key.expiring", "usage.threshold"])).webhook;
  const { key } = await store.createKey("ending", "free", { expiresAt: new Date(T0 + 3 * 86_400_000).toISOString(), allowedCidrs: null, allowedOrigins: null, metadata: null });
  expect(await emitExpiringKeys(store, (await store.listKeys()).map(expiringView), new Date(T0))).toBe(1);
  await store.charge({ keyId: key.id, period: PERIOD, units: 8, limit: 10, at: T0 });
  const due = await store.webhooks.claimDeliveries({ limit: 10, nowMs: T0 + 1000, leaseMs: 60_000 });
  expect(due.map((d) => d.eventType).sort()).toEqual(["key.expiring", "usage.threshold"]);
  for (const d of due) {
    await store.webhooks.recordAttempt({ deliveryId: d.deliveryId, eventId: d.eventId, webhookId: d.webhookId, attempt: 1, at: new Date(T0).toISOString(), status: 200, durationMs: 1, response: "", error: null, state: "delivered", nextAttemptAt: null });
  }
  return { keyId: key.id, webhookId: hook.id };
}

/** A copy of tellOnce's state: the sweep and the charge's threshold tell nothing again, and nothing is due. */
async function expectToldAlready(copy: Store, told: { keyId: string; webhookId: string }): Promise<void> {
  expect(await emitExpiringKeys(copy, (await copy.listKeys()).map(expiringView), new Date(T0 + 86_400_000))).toBe(0);
  expect(await copy.webhooks.addEvent({ id: "msg_again", type: "usage.threshold", body: "{}", createdAt: new Date(T0).toISOString(), onceKey: thresholdOnceKey(told.keyId, PERIOD, 80) })).toBe(false);
  expect(await copy.webhooks.claimDeliveries({ limit: 10, nowMs: T0 + 2 * 86_400_000, leaseMs: 60_000 })).toEqual([]);
  expect(await copy.webhooks.listDeliveries(told.webhookId, 10)).toEqual([]);
}

describe.skipIf(!postgresAvailable)("the events told once, copied between SQLite and PostgreSQL", () => {
  test("SQLite to PostgreSQL and back: no copy tells them again", async () => {
    const open = async (location: string) => openStore(location, { clock: () => new Date(T0) });
    const source = await open(freshPath());
    const told = await tellOnce(source);
    const snapshot = await source.exportState();
    await source.close();
    const postgres = await open(await states.fresh());
    await postgres.importState(snapshot);
    const fromPostgres = await postgres.exportState();
    expect(fromPostgres.onceEvents).toEqual(snapshot.onceEvents!);
    await expectToldAlready(postgres, told);
    await postgres.close();
    const back = await open(freshPath());
    await back.importState(fromPostgres);
    expect((await back.exportState()).onceEvents).toEqual(snapshot.onceEvents!);
    await expectToldAlready(back, told);
    await back.close();
  });
});

describe("webhooks on SQLite", () => {
  // The rowid of a table emptied starts again at 1 by itself.
  webhookSuite(async () => freshPath(), async () => {});

  test("a state file of schema version 2 gains the webhook tables, keeping its keys and units", async () => {
    const path = freshPath();
    const store = SqliteStore.open(path);
    const { key } = await store.createKey("old", "free");
    await store.charge({ keyId: key.id, period: PERIOD, units: 5, limit: null });
    await store.close();
    const db = new Database(path);
    downgradeSqlite(db, 2);
    db.close();
    const reopened = SqliteStore.open(path);
    expect(await reopened.unitsUsed(key.id, PERIOD)).toBe(5);
    expect(await reopened.webhooks.listWebhooks()).toEqual([]);
    await reopened.webhooks.createWebhook("https://example.com/hook", ["key.created"]);
    await reopened.close();
  });

  test("a webhook URL a state holds from before C1 characters were refused in new URLs still copies; a new one with them is refused", async () => {
    const path = freshPath();
    const store = SqliteStore.open(path);
    const { webhook } = await store.webhooks.createWebhook("http://127.0.0.1:9/hook", ["key.created"]);
    await store.close();
    const db = new Database(path);
    db.run("UPDATE webhooks SET url = ?1 WHERE id = ?2", ["http://127.0.0.1:9/hook\u0085x", webhook.id]);
    db.close();
    const source = SqliteStore.open(path);
    const snapshot = await source.exportState();
    await source.close();
    const copy = SqliteStore.open(freshPath());
    await copy.importState(snapshot);
    expect((await copy.webhooks.listWebhooks()).map((copied) => copied.url)).toEqual(["http://127.0.0.1:9/hook\u0085x"]);
    expect(webhookUrlError("http://127.0.0.1:9/new\u0085x")).toBe("the URL holds spaces or control characters");
    await copy.close();
  });
});
describe.skipIf(!postgresAvailable)("webhooks on PostgreSQL", () =>
  webhookSuite(states.fresh, async (url, id) => {
    const sql = new SQL(url, { max: 1 });
    try {
      await sql.unsafe(`ALTER TABLE webhook_deliveries ALTER COLUMN id RESTART WITH ${id}`);
    } finally {
      await sql.close();
    }
  }),
);

import { expect, test } from "bun:test";
import { KeyService } from "../../src/access/key-service.ts";
import { AuditLog } from "../../src/audit/audit-log.ts";
import { emitExpiringKeys, expiringView } from "../../src/events/emit.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";

/**
 * key.expiring for a key given an expiry within the notice (CONTRACT §16): told when
 * the key is created or changed so, not ten minutes later by serve's sweep, and once
 * per key and expiry however often the sweep runs after.
 */

const DAY = 86_400_000;

test("a key created or updated with an expiry within 7 days is announced at once, once per expiry; one further off waits for the sweep", async () => {
  const store = SqliteStore.open(":memory:");
  await store.webhooks.createWebhook("http://127.0.0.1:9/x", ["key.created", "key.expiring"]);
  const now = new Date("2026-11-25T00:00:00.000Z");
  const keys = new KeyService(store, new AuditLog(store, () => now), { now: () => now });
  /** The events recorded since the last call (a claimed delivery is leased, and not claimed again), as [type, key id, expires_at]. */
  const recorded = async () =>
    (await store.webhooks.claimDeliveries({ limit: 100, nowMs: now.getTime(), leaseMs: DAY }))
      .map((delivery) => JSON.parse(delivery.body) as { type: string; data: { key: { id: string }; expires_at?: string } })
      .map((event) => [event.type, event.data.key.id, event.data.expires_at ?? null]);
  const controls = (expiresAt: string | null) => ({ expiresAt, allowedCidrs: null, allowedOrigins: null, metadata: null });
  const inDays = (days: number) => new Date(now.getTime() + days * DAY).toISOString();

  const soon = (await keys.create("cli", "soon", "free", controls(inDays(3)))).key;
  expect(await recorded()).toEqual([
    ["key.created", soon.id, null],
    ["key.expiring", soon.id, inDays(3)],
  ]);
  const later = (await keys.create("cli", "later", "free", controls(inDays(30)))).key;
  expect(await recorded()).toEqual([["key.created", later.id, null]]);

  await keys.update("cli", later.id, { expiresAt: inDays(2) });
  expect(await recorded()).toEqual([["key.expiring", later.id, inDays(2)]]);
  // A change that leaves the expiry as it is tells nothing; a new expiry within the notice is told again.
  await keys.update("cli", later.id, { metadata: { team: "a" } });
  expect(await recorded()).toEqual([]);
  await keys.update("cli", later.id, { expiresAt: inDays(1) });
  expect(await recorded()).toEqual([["key.expiring", later.id, inDays(1)]]);
  // The sweep after tells none of them again.
  expect(await emitExpiringKeys(store, (await store.listKeys()).map(expiringView), now)).toBe(0);
  expect(await recorded()).toEqual([]);
  await store.close();
});

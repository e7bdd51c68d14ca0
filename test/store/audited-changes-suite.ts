import { describe, expect, test } from "bun:test";
import { createAdminTokenAudited, revokeAdminTokenAudited } from "../../src/access/admin-token-service.ts";
import { KeyService } from "../../src/access/key-service.ts";
import { setPlanAudited } from "../../src/access/plan-service.ts";
import { AuditLog, CLI_ACTOR } from "../../src/audit/audit-log.ts";
import { CorrectionService } from "../../src/corrections/correction-service.ts";
import { Webhooks } from "../../src/events/webhooks.ts";
import { hashSecret } from "../../src/store/secret.ts";
import type { Store } from "../../src/store/store.ts";
import type { StoreKind } from "./store-suite.ts";

/** A store kind whose tables can be made to refuse every insert. */
export interface AuditedStoreKind extends StoreKind {
  /** From now on, every insert into `table` of the store at `location` fails with "`table` refused" (a trigger). */
  refuseInserts(location: string, table: "audit_log" | "webhook_events"): Promise<void>;
}

const NOW = new Date("2026-11-20T12:00:00.000Z");
const DAY = 86_400_000;

/** A store holding one of each thing an operator changes, whose `table` refuses every insert from now on. */
async function refusingStore(kind: AuditedStoreKind, table: "audit_log" | "webhook_events" = "audit_log") {
  const location = await kind.fresh();
  const store = await kind.open(location, { clock: () => NOW });
  const audit = new AuditLog(store, () => NOW);
  const keys = new KeyService(store, audit, { now: () => NOW });
  const corrections = new CorrectionService(store, audit);
  const webhooks = new Webhooks(store, () => NOW);
  const webhook = (await webhooks.add(CLI_ACTOR, "http://127.0.0.1:9/hook", ["key.created", "key.rotated", "key.revoked", "key.expiring"])).webhook;
  const key = await keys.create(CLI_ACTOR, "kept", "free");
  const revokedKey = (await keys.create(CLI_ACTOR, "gone", "free")).key;
  await keys.revoke(CLI_ACTOR, revokedKey.id);
  const token = (await createAdminTokenAudited(store, audit, CLI_ACTOR, "ops", false)).token;
  const revokedToken = (await createAdminTokenAudited(store, audit, CLI_ACTOR, "old", false)).token;
  await revokeAdminTokenAudited(store, audit, CLI_ACTOR, revokedToken.id);
  await corrections.set(CLI_ACTOR, "198.51.100.0/24", { country_code: "FR" }, "kept");
  await kind.refuseInserts(location, table);
  return { store, audit, keys, corrections, webhooks, webhook, key, revokedKey, token, revokedToken };
}

type Refusing = Awaited<ReturnType<typeof refusingStore>>;

/** Everything the store holds, the outbox included, and its change counter. */
async function everything(store: Store, webhookId: string) {
  return { state: await store.exportState(), deliveries: await store.webhooks.listDeliveries(webhookId, 100), generation: await store.generation() };
}

/** Every kind of change an operator makes (admin API, console, CLI), through the code that makes it. */
const CHANGES: readonly (readonly [string, (s: Refusing) => Promise<unknown>])[] = [
  ["key created", (s) => s.keys.create(CLI_ACTOR, "new", "free")],
  ["key created with an expiry within the notice", (s) => s.keys.create(CLI_ACTOR, "new", "free", { expiresAt: new Date(NOW.getTime() + 2 * DAY).toISOString(), allowedCidrs: null, allowedOrigins: null, metadata: null })],
  ["key rotated", (s) => s.keys.rotate(CLI_ACTOR, s.key.key.id)],
  ["key rotated with a grace", (s) => s.keys.rotate(CLI_ACTOR, s.key.key.id, DAY)],
  ["key revoked", (s) => s.keys.revoke(CLI_ACTOR, s.key.key.id)],
  ["key moved to another plan", (s) => s.keys.update(CLI_ACTOR, s.key.key.id, { plan: "standard" })],
  ["key controls changed", (s) => s.keys.update(CLI_ACTOR, s.key.key.id, { expiresAt: new Date(NOW.getTime() + 2 * DAY).toISOString(), metadata: { team: "maps" } })],
  ["key moved to another plan by setKeyPlan", (s) => s.store.setKeyPlan(s.key.key.id, "standard", (after) => s.audit.change({ actor: CLI_ACTOR, action: "key.updated", target: after.id }))],
  ["plan created", (s) => setPlanAudited(s.store, s.audit, CLI_ACTOR, "gold", { maxBatchSize: 5, monthlyUnits: 50, rateLimit: 1 })],
  ["plan changed", (s) => setPlanAudited(s.store, s.audit, CLI_ACTOR, "free", { rateLimit: 5 })],
  ["admin token created", (s) => createAdminTokenAudited(s.store, s.audit, CLI_ACTOR, "new", false)],
  ["read-only admin token created", (s) => createAdminTokenAudited(s.store, s.audit, CLI_ACTOR, "reader", true)],
  ["admin token revoked", (s) => revokeAdminTokenAudited(s.store, s.audit, CLI_ACTOR, s.token.id)],
  ["correction created", (s) => s.corrections.set(CLI_ACTOR, "203.0.113.0/24", { country_code: "DE" }, null)],
  ["correction replaced", (s) => s.corrections.set(CLI_ACTOR, "198.51.100.0/24", { country_code: "BE" }, null)],
  ["correction removed", (s) => s.corrections.remove(CLI_ACTOR, "198.51.100.0/24")],
  ["webhook added", (s) => s.webhooks.add(CLI_ACTOR, "http://127.0.0.1:9/other", ["key.revoked"])],
  ["webhook removed", (s) => s.webhooks.remove(CLI_ACTOR, s.webhook.id)],
];

/** The changes that announce themselves to the webhooks: key.created, key.rotated, key.revoked, key.expiring. */
const ANNOUNCED = new Set(["key created", "key created with an expiry within the notice", "key rotated", "key rotated with a grace", "key revoked", "key controls changed"]);

/**
 * CONTRACT §16's audit log and a key change's events, as one transaction with the change
 * they record: a change whose entry or event cannot be written is not made (the call
 * fails, and the store holds exactly what it held, outbox included), so no change is
 * ever committed without its entry, nor a key change without its events. Run once a
 * store kind (audited-changes-sqlite.test.ts, audited-changes-postgres.test.ts).
 */
export function auditedChangesSuite(kind: AuditedStoreKind): void {
  describe("a change whose audit entry cannot be written is not made", () => {
    for (const [name, change] of CHANGES) {
      test(name, async () => {
        const s = await refusingStore(kind);
        const before = await everything(s.store, s.webhook.id);
        await expect(change(s)).rejects.toThrow(/audit_log refused/);
        expect(await everything(s.store, s.webhook.id)).toEqual(before);
        // Not rotated, revoked or moved: its secret works as it did, alone.
        expect(await s.store.findActiveKey(hashSecret(s.key.secret))).toEqual({ key: s.key.key, plan: (await s.store.getPlan("free"))! });
        await s.store.close();
      });
    }
  });

  describe("a key change whose event cannot be written is not made either", () => {
    for (const [name, change] of CHANGES.filter(([name]) => ANNOUNCED.has(name))) {
      test(name, async () => {
        const s = await refusingStore(kind, "webhook_events");
        const before = await everything(s.store, s.webhook.id);
        await expect(change(s)).rejects.toThrow(/webhook_events refused/);
        expect(await everything(s.store, s.webhook.id)).toEqual(before);
        expect(await s.store.findActiveKey(hashSecret(s.key.secret))).toEqual({ key: s.key.key, plan: (await s.store.getPlan("free"))! });
        await s.store.close();
      });
    }
  });

  test("a change that changes nothing records nothing, and so is not refused", async () => {
    const s = await refusingStore(kind);
    const before = await everything(s.store, s.webhook.id);
    expect(await s.keys.revoke(CLI_ACTOR, s.revokedKey.id)).toEqual({ key: (await s.store.getKey(s.revokedKey.id))!, revoked: false });
    expect(await s.keys.update(CLI_ACTOR, s.key.key.id, { plan: "free", metadata: null })).toEqual(s.key.key);
    expect(await setPlanAudited(s.store, s.audit, CLI_ACTOR, "free", { rateLimit: 10 })).toEqual({ name: "free", maxBatchSize: 100, monthlyUnits: 100_000, rateLimit: 10 });
    const again = await revokeAdminTokenAudited(s.store, s.audit, CLI_ACTOR, s.revokedToken.id);
    expect([again?.token.revokedAt, again?.revoked]).toEqual([NOW.toISOString(), false]);
    expect(await everything(s.store, s.webhook.id)).toEqual(before);
    await s.store.close();
  });

  auditedChangesDetailSuite(kind);
}

/**
 * More of CONTRACT §16's "a change that changes nothing records nothing", and what a
 * creation records, on every store kind (run from auditedChangesSuite).
 */
export function auditedChangesDetailSuite(kind: AuditedStoreKind): void {
  test("setting a correction to what the block holds writes nothing: not refused, updated_at and the change counter stay", async () => {
    const s = await refusingStore(kind);
    const before = await everything(s.store, s.webhook.id);
    const [held] = await s.store.listCorrections();
    expect(await s.corrections.set(CLI_ACTOR, "198.51.100.0/24", { country_code: "FR" }, "kept")).toEqual(held!);
    expect(await everything(s.store, s.webhook.id)).toEqual(before);
    // A different note is a change: its entry is refused, and so is the change.
    await expect(s.corrections.set(CLI_ACTOR, "198.51.100.0/24", { country_code: "FR" }, "other")).rejects.toThrow(/audit_log refused/);
    await s.store.close();
  });

  test("a plan's creation records every limit, an unlimited (null) one too", async () => {
    const location = await kind.fresh();
    const store = await kind.open(location, { clock: () => NOW });
    const audit = new AuditLog(store, () => NOW);
    await setPlanAudited(store, audit, CLI_ACTOR, "open", { maxBatchSize: 10, monthlyUnits: null, rateLimit: null });
    const [entry] = await audit.list("2026-11-20", "2026-11-20", 10);
    expect(entry).toMatchObject({ action: "plan.created", target: "plan:open" });
    expect(entry!.changes).toEqual({ max_batch_size: { from: null, to: 10 }, monthly_units: { from: null, to: null }, rate_limit: { from: null, to: null } });
    await store.close();
  });
}

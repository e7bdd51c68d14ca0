import { describe, expect, test } from "bun:test";
import { hashSecret } from "../../src/store/secret.ts";
import { StoreError, type AuditEntry, type KeyControls } from "../../src/store/store.ts";
import type { StoreKind } from "./store-suite.ts";

const CONTROLS: KeyControls = {
  expiresAt: "2027-01-01T00:00:00.000Z",
  allowedCidrs: ["203.0.113.0/24", "2001:db8::/32"],
  allowedOrigins: ["https://app.example.com"],
  metadata: { team: "maps", tags: ["a", "b"], nested: { n: 1 } },
};

/**
 * What CONTRACT §16 asks of every Store: key controls, rotation with a grace period,
 * read-only admin tokens and the audit log, carried by a copy. Run once a store kind
 * (key-controls-store-sqlite.test.ts, key-controls-store-postgres.test.ts).
 */
export function keyControlsStoreSuite(kind: StoreKind): void {
  describe("key controls", () => {
    test("set at creation: kept, listed, and in the key cache's snapshot; a key without any has none", async () => {
      const store = await kind.open(await kind.fresh());
      const issued = await store.createKey("web", "free", CONTROLS);
      expect(issued.key.controls).toEqual(CONTROLS);
      expect((await store.getKey(issued.key.id))?.controls).toEqual(CONTROLS);
      expect((await store.listKeys())[0]?.controls).toEqual(CONTROLS);
      expect((await store.authSnapshot()).keysByHash.get(hashSecret(issued.secret))?.key.controls).toEqual(CONTROLS);
      expect((await store.findActiveKey(hashSecret(issued.secret)))?.key.controls).toEqual(CONTROLS);
      const plain = await store.createKey("plain", "free");
      expect(plain.key).not.toHaveProperty("controls");
      expect(await store.getKey(plain.key.id)).not.toHaveProperty("controls");
      // Every control null is no controls.
      const none = await store.createKey("none", "free", { expiresAt: null, allowedCidrs: [], allowedOrigins: null, metadata: null });
      expect(await store.getKey(none.key.id)).not.toHaveProperty("controls");
      await store.close();
    });

    test("updateKey: what is given changes in one step (plan included), null clears, the rest stays; only a real change moves the counter", async () => {
      const store = await kind.open(await kind.fresh());
      const { key, secret } = await store.createKey("web", "free", CONTROLS);
      let generation = (await store.generation()).count;
      const moved = await store.updateKey(key.id, { plan: "standard", allowedOrigins: null, metadata: { v: 2 } });
      expect(moved).toMatchObject({ plan: "standard", controls: { ...CONTROLS, allowedOrigins: null, metadata: { v: 2 } } });
      expect(await store.getKey(key.id)).toEqual(moved!);
      expect((await store.generation()).count).not.toBe(generation);
      expect((await store.findActiveKey(hashSecret(secret)))?.plan.name).toBe("standard");
      generation = (await store.generation()).count;
      expect(await store.updateKey(key.id, { plan: "standard", metadata: { v: 2 } })).toEqual(moved!);
      expect(await store.updateKey(key.id, {})).toEqual(moved!);
      expect((await store.generation()).count).toBe(generation);
      const cleared = await store.updateKey(key.id, { expiresAt: null, allowedCidrs: null, metadata: null });
      expect(cleared).not.toHaveProperty("controls");
      expect(await store.updateKey("key_nosuchkey0000000", { metadata: { a: 1 } })).toBeNull();
      await store.close();
    });

    test("updateKey refuses, changing nothing, an unknown plan and a revoked key", async () => {
      const store = await kind.open(await kind.fresh());
      const { key } = await store.createKey("web", "free", CONTROLS);
      await expect(store.updateKey(key.id, { plan: "gold", metadata: null })).rejects.toThrow(StoreError);
      expect((await store.getKey(key.id))?.controls).toEqual(CONTROLS);
      await store.revokeKey(key.id);
      await expect(store.updateKey(key.id, { allowedCidrs: null })).rejects.toThrow(/revoked/);
      expect((await store.getKey(key.id))?.controls).toEqual(CONTROLS);
      await store.close();
    });
  });

  describe("rotation with a grace period", () => {
    test("both secrets work, the old one marked with the end of its grace; a new rotation without grace ends both; revocation ends all", async () => {
      const store = await kind.open(await kind.fresh(), { clock: () => new Date("2026-11-05T10:00:00Z") });
      const { key, secret: first } = await store.createKey("web", "free", CONTROLS);
      const second = (await store.rotateKey(key.id, { graceMs: 3_600_000 }))!;
      expect(second.key.graceUntil).toBe("2026-11-05T11:00:00.000Z");
      expect((await store.getKey(key.id))?.graceUntil).toBe("2026-11-05T11:00:00.000Z");
      const snapshot = await store.authSnapshot();
      expect(snapshot.keysByHash.get(hashSecret(second.secret))?.secretValidUntil).toBeUndefined();
      expect(snapshot.keysByHash.get(hashSecret(first))?.secretValidUntil).toBe(Date.parse("2026-11-05T11:00:00.000Z"));
      expect(snapshot.keysByHash.get(hashSecret(first))?.key.controls).toEqual(CONTROLS);
      expect((await store.findActiveKey(hashSecret(first)))?.secretValidUntil).toBe(Date.parse("2026-11-05T11:00:00.000Z"));
      expect((await store.findActiveKey(hashSecret(second.secret)))?.secretValidUntil).toBeUndefined();

      // A second rotation with grace keeps only the secret it replaces.
      const third = (await store.rotateKey(key.id, { graceMs: 60_000 }))!;
      expect(await store.findActiveKey(hashSecret(first))).toBeNull();
      expect((await store.findActiveKey(hashSecret(second.secret)))?.secretValidUntil).toBe(Date.parse("2026-11-05T10:01:00.000Z"));

      const fourth = (await store.rotateKey(key.id))!;
      expect(fourth.key).not.toHaveProperty("graceUntil");
      for (const old of [first, second.secret, third.secret]) expect(await store.findActiveKey(hashSecret(old))).toBeNull();
      expect((await store.authSnapshot()).keysByHash.size).toBe(1);

      const fifth = (await store.rotateKey(key.id, { graceMs: 60_000 }))!;
      await store.revokeKey(key.id);
      for (const old of [fourth.secret, fifth.secret]) expect(await store.findActiveKey(hashSecret(old))).toBeNull();
      expect((await store.authSnapshot()).keysByHash.size).toBe(0);
      await store.close();
    });
  });

  describe("read-only admin tokens", () => {
    test("made read-only, listed and found as such; an ordinary token has no such mark", async () => {
      const store = await kind.open(await kind.fresh());
      const reader = await store.createReadOnlyAdminToken("  auditor ");
      const writer = await store.createAdminToken("ops");
      expect(reader.token).toMatchObject({ name: "auditor", readOnly: true });
      expect(await store.findAdminToken(hashSecret(reader.secret))).toEqual(reader.token);
      expect(await store.getAdminToken(reader.token.id)).toEqual(reader.token);
      expect(await store.findAdminToken(hashSecret(writer.secret))).not.toHaveProperty("readOnly");
      expect((await store.listAdminTokens()).map((token) => token.readOnly ?? false)).toEqual([true, false]);
      await expect(store.createReadOnlyAdminToken(" ")).rejects.toThrow(StoreError);
      await store.close();
    });
  });

  describe("the audit log", () => {
    test("entries come back newest first, within [from, to), at most `limit`", async () => {
      const store = await kind.open(await kind.fresh());
      const at = (day: string, time = "12:00:00.000") => `${day}T${time}Z`;
      // Entries are written with the changes they record: here, admin tokens made for them.
      const record = (entry: AuditEntry) => store.createAdminToken("t", () => ({ entry }));
      await record({ at: at("2026-11-01"), actor: "cli", action: "key.created", target: "key_a", changes: { name: { from: null, to: "a" } } });
      await record({ at: at("2026-11-02"), actor: "adm_x", action: "key.updated", target: "key_a", changes: { plan: { from: "free", to: "standard" } } });
      await record({ at: at("2026-11-02"), actor: "adm_x", action: "key.revoked", target: "key_a", changes: {} });
      await record({ at: at("2026-11-03", "00:00:00.000"), actor: "cli", action: "plan.updated", target: "plan:free", changes: { rate_limit: { from: 10, to: 5 } } });
      const all = await store.listAudit(at("2026-11-01", "00:00:00.000"), at("2026-11-04", "00:00:00.000"), 100);
      expect(all.map((entry) => entry.action)).toEqual(["plan.updated", "key.revoked", "key.updated", "key.created"]);
      expect(all[2]).toEqual({ at: "2026-11-02T12:00:00.000Z", actor: "adm_x", action: "key.updated", target: "key_a", changes: { plan: { from: "free", to: "standard" } } });
      expect((await store.listAudit(at("2026-11-02", "00:00:00.000"), at("2026-11-03", "00:00:00.000"), 100)).map((entry) => entry.action)).toEqual(["key.revoked", "key.updated"]);
      expect((await store.listAudit(at("2026-11-01", "00:00:00.000"), at("2026-11-04", "00:00:00.000"), 2)).map((entry) => entry.action)).toEqual(["plan.updated", "key.revoked"]);
      expect(await store.listAudit(at("2026-10-01", "00:00:00.000"), at("2026-11-01", "00:00:00.000"), 100)).toEqual([]);
      // Entries leave the keys' change counter alone (as admin tokens do).
      const generation = (await store.generation()).count;
      await record({ at: at("2026-11-05"), actor: "cli", action: "x.y", target: "t", changes: {} });
      expect((await store.generation()).count).toBe(generation);
      await store.close();
    });

    test("a page at a time: entries of one millisecond are told apart, every entry is reached once, and entries written meanwhile move no page", async () => {
      const store = await kind.open(await kind.fresh());
      const at = (time: string) => `2026-11-02T${time}Z`;
      const record = (time: string, target: string) => store.createAdminToken("t", () => ({ entry: { at: at(time), actor: "cli", action: "key.updated", target, changes: {} } }));
      // 7 entries, 5 of them in one millisecond, written out of time order.
      await record("10:00:00.000", "e1");
      await record("12:00:00.000", "e3");
      for (const target of ["e4", "e5", "e6", "e7", "e8"]) await record("11:00:00.000", target);
      const [from, to] = [at("00:00:00.000"), "2026-11-03T00:00:00.000Z"];
      const first = await store.pageAudit(from, to, 3, null);
      expect(first.entries.map((entry) => entry.target)).toEqual(["e3", "e8", "e7"]);
      expect(first.next).toMatchObject({ at: at("11:00:00.000") });
      // Written between two pages, in the same millisecond as the last entry shown: newer than it.
      await record("11:00:00.000", "e9");
      await record("13:00:00.000", "e10");
      const second = await store.pageAudit(from, to, 3, first.next);
      expect(second.entries.map((entry) => entry.target)).toEqual(["e6", "e5", "e4"]);
      const third = await store.pageAudit(from, to, 3, second.next);
      expect(third).toEqual({ entries: [{ at: at("10:00:00.000"), actor: "cli", action: "key.updated", target: "e1", changes: {} }], next: null });
      // A page that ends with the span's last entry says so.
      expect((await store.pageAudit(from, at("10:30:00.000"), 1, null)).next).toBeNull();
      expect(await store.pageAudit(from, to, 3, { at: at("09:00:00.000"), seq: 1 })).toEqual({ entries: [], next: null });
      await store.close();
    });
  });

  describe("copying", () => {
    test("exportState and importState carry controls, a previous secret and its grace, read-only tokens and the audit log", async () => {
      const store = await kind.open(await kind.fresh(), { clock: () => new Date("2026-11-05T10:00:00Z") });
      const { key, secret: first } = await store.createKey("web", "free", CONTROLS);
      const second = (await store.rotateKey(key.id, { graceMs: 86_400_000 }))!;
      await store.createKey("plain", "free");
      const reader = await store.createReadOnlyAdminToken("auditor", () => ({
        entry: { at: "2026-11-05T10:00:00.000Z", actor: "cli", action: "key.created", target: key.id, changes: { metadata: { from: null, to: { team: "maps" } } } },
      }));
      const snapshot = await store.exportState();
      expect(snapshot.keys[0]).toMatchObject({ controls: CONTROLS, previousSecretHash: hashSecret(first), graceUntil: "2026-11-06T10:00:00.000Z" });
      expect(snapshot.keys[1]).not.toHaveProperty("previousSecretHash");
      expect(snapshot.adminTokens?.[0]).toMatchObject({ readOnly: true });
      expect(snapshot.audit).toHaveLength(1);

      const copy = await kind.open(await kind.fresh());
      await copy.importState(snapshot);
      expect(await copy.exportState()).toEqual(snapshot);
      expect((await copy.findActiveKey(hashSecret(first)))?.secretValidUntil).toBe(Date.parse("2026-11-06T10:00:00.000Z"));
      expect((await copy.findActiveKey(hashSecret(second.secret)))?.key.controls).toEqual(CONTROLS);
      expect((await copy.findAdminToken(hashSecret(reader.secret)))?.readOnly).toBe(true);
      // A snapshot whose previous secret is another key's secret is refused.
      const other = await kind.open(await kind.fresh());
      const bad = { ...snapshot, keys: snapshot.keys.map((k, i) => (i === 0 ? { ...k, previousSecretHash: snapshot.keys[1]!.secretHash } : k)) };
      await expect(other.importState(bad)).rejects.toThrow(StoreError);
      expect(await other.listKeys()).toEqual([]);
      await Promise.all([store.close(), copy.close(), other.close()]);
    });
  });
}

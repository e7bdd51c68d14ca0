import { describe, expect, test } from "bun:test";
import { hashSecret } from "../../src/store/secret.ts";
import { StoreError } from "../../src/store/store.ts";
import type { StoreKind } from "./store-suite.ts";

const DAY = 86_400_000;
const at = (iso: string) => Date.parse(iso);

/**
 * What the admin API needs of every Store (admin tokens, use per key per day, last use),
 * run once a store kind like storeSuite (admin-store-sqlite.test.ts, admin-store-postgres.test.ts).
 */
export function adminStoreSuite(kind: StoreKind): void {
  describe("admin tokens", () => {
    test("created with a secret shown once, listed, found by hash while active, revoked once", async () => {
      const store = await kind.open(await kind.fresh(), { clock: () => new Date("2026-11-05T10:00:00Z") });
      const issued = await store.createAdminToken("  ops  ");
      expect(issued.secret).toMatch(/^ipla_[A-Za-z0-9_-]{43}$/);
      expect(issued.token).toEqual({ id: expect.stringMatching(/^adm_[a-z2-7]{16}$/), name: "ops", createdAt: "2026-11-05T10:00:00.000Z", revokedAt: null });
      const other = await store.createAdminToken("ci");
      expect((await store.listAdminTokens()).map((token) => token.id)).toEqual([issued.token.id, other.token.id]);
      expect(await store.findAdminToken(hashSecret(issued.secret))).toEqual(issued.token);
      expect(await store.getAdminToken(issued.token.id)).toEqual(issued.token);

      const revoked = await store.revokeAdminToken(issued.token.id);
      expect(revoked?.revokedAt).toBe("2026-11-05T10:00:00.000Z");
      expect(await store.revokeAdminToken(issued.token.id)).toEqual(revoked);
      expect(await store.findAdminToken(hashSecret(issued.secret))).toBeNull();
      expect(await store.findAdminToken(hashSecret(other.secret))).toEqual(other.token);
      expect(await store.revokeAdminToken("adm_nosuchtoken0000")).toBeNull();
      expect(await store.getAdminToken("adm_nosuchtoken0000")).toBeNull();
      await store.close();
    });

    test("an API key is never an admin token, nor an admin token an API key", async () => {
      const store = await kind.open(await kind.fresh());
      const key = await store.createKey("k", "free");
      const token = await store.createAdminToken("ops");
      expect(await store.findAdminToken(hashSecret(key.secret))).toBeNull();
      expect(await store.findActiveKey(hashSecret(token.secret))).toBeNull();
      expect((await store.authSnapshot()).keysByHash.has(hashSecret(token.secret))).toBe(false);
      await store.close();
    });

    test("admin tokens leave the change counter alone; a bad name is refused", async () => {
      const store = await kind.open(await kind.fresh());
      const before = (await store.generation()).count;
      const token = await store.createAdminToken("ops");
      await store.revokeAdminToken(token.token.id);
      expect((await store.generation()).count).toBe(before);
      await expect(store.createAdminToken("   ")).rejects.toThrow(StoreError);
      expect(await store.listAdminTokens()).toHaveLength(1);
      await store.close();
    });
  });

  describe("use per key per day", () => {
    test("granted charges count their units and one request on their UTC day; refusals and zero units count nothing", async () => {
      const store = await kind.open(await kind.fresh());
      const a = (await store.createKey("a", "free")).key.id;
      const b = (await store.createKey("b", "free")).key.id;
      const charge = (keyId: string, units: number, iso: string, limit: number | null = null) =>
        store.charge({ keyId, period: iso.slice(0, 7), units, limit, at: at(iso) });
      // One group: several keys and days in one commit.
      await Promise.all([
        charge(a, 5, "2026-11-01T00:00:00.000Z"),
        charge(a, 2, "2026-11-01T23:59:59.999Z"),
        charge(b, 100, "2026-11-02T08:00:00.000Z"),
        charge(a, 0, "2026-11-03T08:00:00.000Z"),
      ]);
      expect(await charge(a, 10, "2026-11-03T09:00:00.000Z", 12)).toEqual({ ok: false, used: 7 });
      await charge(a, 1, "2026-11-03T10:00:00.000Z");

      expect(await store.usageByDay("2026-10-30", "2026-11-05")).toEqual([
        { day: "2026-11-01", requests: 2, units: 7 },
        { day: "2026-11-02", requests: 1, units: 100 },
        { day: "2026-11-03", requests: 1, units: 1 },
      ]);
      expect(await store.usageByDay("2026-11-02", "2026-11-02")).toEqual([{ day: "2026-11-02", requests: 1, units: 100 }]);
      expect(await store.usageByDay("2026-11-01", "2026-11-30", a)).toEqual([
        { day: "2026-11-01", requests: 2, units: 7 },
        { day: "2026-11-03", requests: 1, units: 1 },
      ]);
      expect(await store.usageByDay("2026-12-01", "2026-12-31")).toEqual([]);
      expect(await store.usageByKey("2026-11-01", "2026-11-30")).toEqual([
        { keyId: b, name: "b", requests: 1, units: 100 },
        { keyId: a, name: "a", requests: 3, units: 8 },
      ]);
      expect(await store.usageByKey("2026-11-03", "2026-11-03")).toEqual([{ keyId: a, name: "a", requests: 1, units: 1 }]);
      // The days add up to the month's units.
      expect(await store.unitsUsed(a, "2026-11")).toBe(8);
      await store.close();
    });

    test("key activity: units of the period asked about and the last use in any period, for every key", async () => {
      const store = await kind.open(await kind.fresh());
      const a = (await store.createKey("a", "free")).key.id;
      const b = (await store.createKey("b", "free")).key.id;
      const c = (await store.createKey("c", "free")).key.id;
      await store.charge({ keyId: a, period: "2026-10", units: 4, limit: null, at: at("2026-10-31T23:00:00.000Z") });
      await store.charge({ keyId: a, period: "2026-11", units: 3, limit: null, at: at("2026-11-01T01:00:00.000Z") });
      // Out of order: the latest time stays.
      await store.charge({ keyId: a, period: "2026-11", units: 1, limit: null, at: at("2026-11-01T00:30:00.000Z") });
      await store.charge({ keyId: b, period: "2026-10", units: 9, limit: null, at: at("2026-10-15T12:00:00.000Z") });
      expect(await store.keyActivity("2026-11")).toEqual([
        { keyId: a, units: 4, lastUsedAt: "2026-11-01T01:00:00.000Z" },
        { keyId: b, units: 0, lastUsedAt: "2026-10-15T12:00:00.000Z" },
        { keyId: c, units: 0, lastUsedAt: null },
      ]);
      await store.close();
    });

    test("a charge without a time counts on the store's clock", async () => {
      const store = await kind.open(await kind.fresh(), { clock: () => new Date("2026-11-20T05:00:00.000Z") });
      const a = (await store.createKey("a", "free")).key.id;
      await store.charge({ keyId: a, period: "2026-11", units: 2, limit: null });
      expect(await store.usageByDay("2026-11-20", "2026-11-20")).toEqual([{ day: "2026-11-20", requests: 1, units: 2 }]);
      expect((await store.keyActivity("2026-11"))[0]?.lastUsedAt).toBe("2026-11-20T05:00:00.000Z");
      await store.close();
    });

    test("concurrent charges from two stores on one location: the days sum to exactly the units granted", async () => {
      const location = await kind.fresh();
      const one = await kind.open(location);
      const two = await kind.open(location);
      const a = (await one.createKey("a", "free")).key.id;
      const start = at("2026-11-10T00:00:00.000Z");
      const outcomes = await Promise.all(
        Array.from({ length: 120 }, (_, i) => (i % 2 ? one : two).charge({ keyId: a, period: "2026-11", units: 3, limit: 200, at: start + (i % 3) * DAY })),
      );
      const granted = outcomes.filter((outcome) => outcome.ok).length;
      expect(granted).toBe(66);
      const days = await one.usageByDay("2026-11-01", "2026-11-30");
      expect(days.reduce((sum, day) => sum + day.units, 0)).toBe(198);
      expect(days.reduce((sum, day) => sum + day.requests, 0)).toBe(66);
      await one.close();
      await two.close();
    });
  });

  describe("copying a store", () => {
    test("days and admin tokens go with the snapshot, and come back the same", async () => {
      const source = await kind.open(await kind.fresh(), { clock: () => new Date("2026-11-05T10:00:00Z") });
      const a = (await source.createKey("a", "free")).key.id;
      await source.charge({ keyId: a, period: "2026-11", units: 3, limit: null, at: at("2026-11-04T10:00:00.000Z") });
      await source.charge({ keyId: a, period: "2026-11", units: 2, limit: null, at: at("2026-11-05T10:00:00.000Z") });
      const token = await source.createAdminToken("ops");
      const snapshot = await source.exportState();
      expect(snapshot.days).toEqual([
        { keyId: a, day: "2026-11-04", requests: 1, units: 3, lastUsedAt: "2026-11-04T10:00:00.000Z" },
        { keyId: a, day: "2026-11-05", requests: 1, units: 2, lastUsedAt: "2026-11-05T10:00:00.000Z" },
      ]);
      expect(snapshot.adminTokens).toEqual([{ ...token.token, secretHash: hashSecret(token.secret) }]);
      const copy = await kind.open(await kind.fresh());
      await copy.importState(snapshot);
      expect(await copy.exportState()).toEqual(snapshot);
      expect(await copy.findAdminToken(hashSecret(token.secret))).toEqual(token.token);
      // Replacing clears what was there: no day row is left behind for a key that went.
      await copy.importState({ ...snapshot, days: [], adminTokens: [] }, { replace: true });
      expect(await copy.usageByDay("2026-11-01", "2026-11-30")).toEqual([]);
      expect(await copy.listAdminTokens()).toEqual([]);
      await expect(copy.importState({ ...snapshot, days: [{ keyId: a, day: "2026-02-30", requests: 1, units: 1, lastUsedAt: "2026-02-28T00:00:00.000Z" }] }, { replace: true })).rejects.toThrow(StoreError);
      await source.close();
      await copy.close();
    });
  });
}

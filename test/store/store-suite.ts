import { describe, expect, test } from "bun:test";
import { hashSecret } from "../../src/store/secret.ts";
import { StoreError, type Charge, type StateSnapshot, type Store } from "../../src/store/store.ts";
import type { RawChanges } from "./raw-changes.ts";

/**
 * The behaviour every Store has, whatever holds it: the suite runs once a store kind
 * (sqlite-store.test.ts, postgres-store.test.ts). Tests of one kind only (files and
 * their modes, WAL, migrations of a database, processes) stay in those files.
 */
export interface StoreKind {
  /** A location for a new, empty store: a file path or a database URL. */
  fresh(): Promise<string>;
  /** Opens (and on first use creates) the store at a location. */
  open(location: string, options?: { readonly clock?: () => Date }): Promise<Store>;
}

const PERIOD = "2026-11";

/** A clock that moves one second a call, from 2026-11-01. */
export function steppingClock(): () => Date {
  let tick = 0;
  return () => new Date(Date.UTC(2026, 10, 1) + 1000 * tick++);
}

export function storeSuite(kind: StoreKind & RawChanges): void {
  async function storeWithKey(location?: string, plan = "free") {
    const store = await kind.open(location ?? (await kind.fresh()));
    const { key } = await store.createKey("k", plan);
    const charge = (units: number, limit: number | null) => store.charge({ keyId: key.id, period: PERIOD, units, limit });
    return { store, keyId: key.id, charge };
  }

  describe("opening", () => {
    test("seeds the plans once; reopening keeps changes and does not migrate again", async () => {
      const location = await kind.fresh();
      const store = await kind.open(location);
      expect(await store.listPlans()).toEqual([
        { name: "free", maxBatchSize: 100, monthlyUnits: 100_000, rateLimit: 10 },
        { name: "standard", maxBatchSize: 1000, monthlyUnits: 10_000_000, rateLimit: 100 },
        { name: "unlimited", maxBatchSize: 10_000, monthlyUnits: null, rateLimit: null },
      ]);
      await store.setPlan("free", { rateLimit: 5 });
      const generation = (await store.generation()).count;
      await store.close();
      const again = await kind.open(location);
      expect((await again.getPlan("free"))?.rateLimit).toBe(5);
      expect(await again.listPlans()).toHaveLength(3);
      expect((await again.generation()).count).toBe(generation);
      await again.close();
    });
  });

  describe("keys", () => {
    test("a new key: formats, trimmed name, plan, time; the secret works once issued", async () => {
      const store = await kind.open(await kind.fresh(), { clock: () => new Date("2026-11-05T10:00:00Z") });
      const issued = await store.createKey("  acme  ", "standard");
      expect(issued.secret).toMatch(/^ipl_[A-Za-z0-9_-]{43}$/);
      expect(issued.key).toEqual({ id: expect.stringMatching(/^key_[a-z2-7]{16}$/), name: "acme", plan: "standard", createdAt: "2026-11-05T10:00:00.000Z", revokedAt: null });
      expect(issued.secret).not.toContain(issued.key.id.slice(4));
      expect(await store.getKey(issued.key.id)).toEqual(issued.key);
      const snapshot = await store.authSnapshot();
      expect(snapshot.keysByHash.get(hashSecret(issued.secret))).toEqual({ key: issued.key, plan: (await store.getPlan("standard"))! });
      await store.close();
    });

    test("lifecycle: list (newest last, revoked included), rotate, revoke", async () => {
      const store = await kind.open(await kind.fresh(), { clock: steppingClock() });
      const a = await store.createKey("a", "free");
      const b = await store.createKey("b", "standard");
      const c = await store.createKey("c", "unlimited");
      expect((await store.listKeys()).map((key) => key.id)).toEqual([a.key.id, b.key.id, c.key.id]);

      const rotated = (await store.rotateKey(a.key.id))!;
      expect(rotated.key).toEqual(a.key);
      expect(rotated.secret).not.toBe(a.secret);
      let snapshot = await store.authSnapshot();
      expect(snapshot.keysByHash.has(hashSecret(a.secret))).toBe(false);
      expect(snapshot.keysByHash.get(hashSecret(rotated.secret))?.key.id).toBe(a.key.id);

      const revoked = (await store.revokeKey(b.key.id))!;
      // Ticks 0 to 2 created the keys, 3 rotated a.
      expect(revoked).toEqual({ ...b.key, revokedAt: "2026-11-01T00:00:04.000Z" });
      // Revoking again changes nothing, not even the time.
      expect(await store.revokeKey(b.key.id)).toEqual(revoked);
      snapshot = await store.authSnapshot();
      expect([...snapshot.keysByHash.values()].map((active) => active.key.id).sort()).toEqual([a.key.id, c.key.id].sort());
      expect(await store.rotateKey(b.key.id)).toBeNull();
      expect((await store.listKeys()).map((key) => [key.id, key.revokedAt !== null])).toEqual([
        [a.key.id, false],
        [b.key.id, true],
        [c.key.id, false],
      ]);

      expect(await store.revokeKey("key_missing")).toBeNull();
      expect(await store.rotateKey("key_missing")).toBeNull();
      expect(await store.getKey("key_missing")).toBeNull();
      await store.close();
    });

    test("a key needs a known plan and a name; a refused key leaves no trace", async () => {
      const store = await kind.open(await kind.fresh());
      const generation = (await store.generation()).count;
      await expect(store.createKey("x", "gold")).rejects.toThrow(new StoreError('there is no plan "gold"'));
      for (const name of ["", "   ", "x".repeat(201), "a\nb", "bell\u0007"]) {
        await expect(store.createKey(name, "free")).rejects.toThrow(StoreError);
      }
      expect((await store.createKey("x".repeat(200), "free")).key.name).toHaveLength(200);
      expect(await store.listKeys()).toHaveLength(1);
      expect((await store.generation()).count).toBe(generation + 1);
      await store.close();
    });

    test("setKeyPlan moves an active key to another plan; its secret, name and usage stay", async () => {
      const store = await kind.open(await kind.fresh());
      const { key, secret } = await store.createKey("k", "free");
      await store.charge({ keyId: key.id, period: "2026-11", units: 3, limit: null });
      expect(await store.setKeyPlan(key.id, "standard")).toEqual({ ...key, plan: "standard" });
      expect(await store.getKey(key.id)).toEqual({ ...key, plan: "standard" });
      expect(await store.findActiveKey(hashSecret(secret))).toEqual({ key: { ...key, plan: "standard" }, plan: (await store.getPlan("standard"))! });
      expect(await store.unitsUsed(key.id, "2026-11")).toBe(3);
      // The plan it is on already: nothing to do.
      expect(await store.setKeyPlan(key.id, "standard")).toEqual({ ...key, plan: "standard" });
      await store.close();
    });

    test("setKeyPlan: no such key is null; an unknown plan or a revoked key is refused and changes nothing", async () => {
      const store = await kind.open(await kind.fresh());
      const { key } = await store.createKey("k", "free");
      const generation = (await store.generation()).count;
      expect(await store.setKeyPlan("key_missing", "standard")).toBeNull();
      await expect(store.setKeyPlan(key.id, "gold")).rejects.toThrow(new StoreError('there is no plan "gold"'));
      expect(await store.getKey(key.id)).toEqual(key);
      const revoked = (await store.revokeKey(key.id))!;
      const afterRevoke = (await store.generation()).count;
      await expect(store.setKeyPlan(key.id, "standard")).rejects.toThrow(/was revoked on .*; a revoked key keeps its plan/);
      expect(await store.getKey(key.id)).toEqual(revoked);
      expect(afterRevoke).toBe(generation + 1);
      expect((await store.generation()).count).toBe(afterRevoke);
      await store.close();
    });

    test("findActiveKey reads one active key by its secret's hash, with its current plan", async () => {
      const store = await kind.open(await kind.fresh());
      const a = await store.createKey("a", "free");
      const b = await store.createKey("b", "standard");
      expect(await store.findActiveKey(hashSecret(a.secret))).toEqual({ key: a.key, plan: (await store.getPlan("free"))! });
      await store.setPlan("standard", { rateLimit: 7 });
      expect((await store.findActiveKey(hashSecret(b.secret)))?.plan.rateLimit).toBe(7);
      const rotated = (await store.rotateKey(a.key.id))!;
      expect(await store.findActiveKey(hashSecret(a.secret))).toBeNull();
      expect((await store.findActiveKey(hashSecret(rotated.secret)))?.key.id).toBe(a.key.id);
      await store.revokeKey(b.key.id);
      expect(await store.findActiveKey(hashSecret(b.secret))).toBeNull();
      expect(await store.findActiveKey(hashSecret("ipl_unknown"))).toBeNull();
      await store.close();
    });

    test("the snapshot carries each key's current plan", async () => {
      const store = await kind.open(await kind.fresh());
      const { secret } = await store.createKey("k", "free");
      await store.setPlan("free", { monthlyUnits: 7, rateLimit: null });
      const active = (await store.authSnapshot()).keysByHash.get(hashSecret(secret));
      expect(active?.plan).toEqual({ name: "free", maxBatchSize: 100, monthlyUnits: 7, rateLimit: null });
      await store.close();
    });
  });

  describe("plans", () => {
    test("a new plan needs every field; an existing one keeps what is left out", async () => {
      const store = await kind.open(await kind.fresh());
      await expect(store.setPlan("gold", { maxBatchSize: 10 })).rejects.toThrow(/missing: monthly_units, rate_limit/);
      expect(await store.getPlan("gold")).toBeNull();
      expect(await store.setPlan("gold", { maxBatchSize: 10, monthlyUnits: null, rateLimit: 3 })).toEqual({ name: "gold", maxBatchSize: 10, monthlyUnits: null, rateLimit: 3 });
      expect(await store.setPlan("gold", { monthlyUnits: 50 })).toEqual({ name: "gold", maxBatchSize: 10, monthlyUnits: 50, rateLimit: 3 });
      expect(await store.setPlan("gold", { rateLimit: null })).toEqual({ name: "gold", maxBatchSize: 10, monthlyUnits: 50, rateLimit: null });
      expect(await store.getPlan("gold")).toEqual({ name: "gold", maxBatchSize: 10, monthlyUnits: 50, rateLimit: null });
      expect((await store.listPlans()).map((plan) => plan.name)).toEqual(["free", "gold", "standard", "unlimited"]);
      await store.close();
    });

    test("bad values and names are refused and change nothing", async () => {
      const store = await kind.open(await kind.fresh());
      const before = await store.listPlans();
      const generation = (await store.generation()).count;
      await expect(store.setPlan("free", { maxBatchSize: 0 })).rejects.toThrow(StoreError);
      await expect(store.setPlan("free", { maxBatchSize: 5, monthlyUnits: 1.5 })).rejects.toThrow(StoreError);
      await expect(store.setPlan("free", { rateLimit: -1 })).rejects.toThrow(StoreError);
      await expect(store.setPlan("bad name", { maxBatchSize: 1, monthlyUnits: 1, rateLimit: 1 })).rejects.toThrow(StoreError);
      expect(await store.listPlans()).toEqual(before);
      expect((await store.generation()).count).toBe(generation);
      await store.close();
    });

    test("setting a plan to what it is writes nothing: the change counter stays (no server reloads its keys for it)", async () => {
      const store = await kind.open(await kind.fresh());
      const free = (await store.listPlans()).find((plan) => plan.name === "free")!;
      const generation = (await store.generation()).count;
      expect(await store.setPlan("free", { maxBatchSize: free.maxBatchSize, monthlyUnits: free.monthlyUnits, rateLimit: free.rateLimit })).toEqual(free);
      expect(await store.setPlan("free", {})).toEqual(free);
      expect((await store.generation()).count).toBe(generation);
      await store.setPlan("free", { maxBatchSize: free.maxBatchSize + 1 });
      expect((await store.generation()).count).toBeGreaterThan(generation);
      await store.close();
    });
  });

  describe("the change counter", () => {
    test("moves on every key and plan change made by another store on the same state, and only then", async () => {
      const location = await kind.fresh();
      const server = await kind.open(location);
      const cli = await kind.open(location);
      let last = (await server.generation()).count;
      const moved = async () => {
        const now = (await server.generation()).count;
        const changed = now !== last;
        last = now;
        return changed;
      };
      const { key } = await cli.createKey("k", "free");
      expect(await moved()).toBe(true);
      await cli.rotateKey(key.id);
      expect(await moved()).toBe(true);
      await cli.setPlan("free", { rateLimit: 11 });
      expect(await moved()).toBe(true);
      await cli.setPlan("gold", { maxBatchSize: 1, monthlyUnits: 1, rateLimit: 1 });
      expect(await moved()).toBe(true);
      await cli.setKeyPlan(key.id, "gold");
      expect(await moved()).toBe(true);
      // The server's view of the key follows, with the plan's limits.
      const seen = [...(await server.authSnapshot()).keysByHash.values()].find((active) => active.key.id === key.id);
      expect(seen?.plan).toEqual({ name: "gold", maxBatchSize: 1, monthlyUnits: 1, rateLimit: 1 });
      await cli.setKeyPlan(key.id, "gold");
      await cli.setKeyPlan(key.id, "none").catch(() => {});
      expect(await moved()).toBe(false);
      await cli.revokeKey(key.id);
      expect(await moved()).toBe(true);

      // Reads, charges and refused or empty changes leave it.
      await cli.charge({ keyId: key.id, period: "2026-11", units: 5, limit: null });
      await cli.revokeKey(key.id);
      await cli.rotateKey(key.id);
      await cli.setKeyPlan(key.id, "free").catch(() => {});
      await cli.createKey("k", "none").catch(() => {});
      await cli.listKeys();
      await cli.authSnapshot();
      expect(await moved()).toBe(false);
      expect((await server.authSnapshot()).generation.count).toBe(last);
      await cli.close();
      await server.close();
    });

    test("is read with the store's id, which stays with the store whatever changes, and is another store's own", async () => {
      const location = await kind.fresh();
      const store = await kind.open(location);
      const { storeId } = await store.generation();
      expect(storeId).toMatch(/^[0-9a-f-]{32,36}$/);
      await store.createKey("k", "free");
      await store.putCorrection("192.0.2.0/24", { asn: 64500 }, null);
      expect((await store.authSnapshot()).generation.storeId).toBe(storeId);
      expect((await store.correctionSnapshot()).generation.storeId).toBe(storeId);
      await store.close();
      const again = await kind.open(location);
      expect((await again.generation()).storeId).toBe(storeId);
      const other = await kind.open(await kind.fresh());
      // Made the same way, the other store's counter reads the same: only the id tells them apart.
      await other.createKey("k", "free");
      await other.putCorrection("192.0.2.0/24", { asn: 64500 }, null);
      expect((await other.generation()).count).toBe((await again.generation()).count);
      expect((await other.generation()).storeId).not.toBe(storeId);
      await other.close();
      await again.close();
    });
  });

  describe("one charge at a time", () => {
    test("charges what fits, refuses what does not, and a refusal costs nothing", async () => {
      const { store, keyId, charge } = await storeWithKey();
      expect(await charge(4, 10)).toEqual({ ok: true, used: 4 });
      expect(await charge(7, 10)).toEqual({ ok: false, used: 4 });
      expect(await charge(6, 10)).toEqual({ ok: true, used: 10 });
      expect(await charge(1, 10)).toEqual({ ok: false, used: 10 });
      expect(await store.unitsUsed(keyId, PERIOD)).toBe(10);
      await store.close();
    });

    test("a charge larger than the whole quota is refused on an unused key", async () => {
      const { store, keyId, charge } = await storeWithKey();
      expect(await charge(11, 10)).toEqual({ ok: false, used: 0 });
      expect(await store.unitsUsed(keyId, PERIOD)).toBe(0);
      await store.close();
    });

    test("zero units charge nothing and always fit, even past a lowered limit", async () => {
      const { store, keyId, charge } = await storeWithKey();
      expect(await charge(0, 10)).toEqual({ ok: true, used: 0 });
      expect(await charge(8, 10)).toEqual({ ok: true, used: 8 });
      expect(await charge(0, 5)).toEqual({ ok: true, used: 8 });
      expect(await charge(0, 0)).toEqual({ ok: true, used: 8 });
      expect(await store.unitsUsed(keyId, PERIOD)).toBe(8);
      await store.close();
    });

    test("no limit: every charge fits, large numbers stay exact", async () => {
      const { store, keyId, charge } = await storeWithKey(await kind.fresh(), "unlimited");
      expect(await charge(2 ** 40, null)).toEqual({ ok: true, used: 2 ** 40 });
      expect(await charge(1, null)).toEqual({ ok: true, used: 2 ** 40 + 1 });
      expect(await store.unitsUsed(keyId, PERIOD)).toBe(2 ** 40 + 1);
      await store.close();
    });

    test("each key and each period counts apart", async () => {
      const store = await kind.open(await kind.fresh());
      const a = (await store.createKey("a", "free")).key.id;
      const b = (await store.createKey("b", "free")).key.id;
      await store.charge({ keyId: a, period: "2026-11", units: 5, limit: 5 });
      expect(await store.charge({ keyId: a, period: "2026-12", units: 5, limit: 5 })).toEqual({ ok: true, used: 5 });
      expect(await store.charge({ keyId: b, period: "2026-11", units: 5, limit: 5 })).toEqual({ ok: true, used: 5 });
      expect(await store.charge({ keyId: a, period: "2026-11", units: 1, limit: 5 })).toEqual({ ok: false, used: 5 });
      expect(await store.unitsUsed(a, "2026-11")).toBe(5);
      expect(await store.unitsUsed(a, "2027-01")).toBe(0);
      expect(await store.unitsUsed("key_unknown", "2026-11")).toBe(0);
      await store.close();
    });

    test.each<[string, Partial<Charge>]>([
      ["negative units", { units: -1 }],
      ["fractional units", { units: 1.5 }],
      ["NaN units", { units: Number.NaN }],
      ["a negative limit", { limit: -1 }],
      ["a fractional limit", { limit: 2.5 }],
      ["a malformed period", { period: "2026-13" }],
    ])("%s are refused before touching the store", async (_, bad) => {
      const { store, keyId } = await storeWithKey();
      await expect(store.charge({ keyId, period: PERIOD, units: 1, limit: 10, ...bad })).rejects.toThrow(RangeError);
      expect(await store.unitsUsed(keyId, PERIOD)).toBe(0);
      await store.close();
    });
  });

  describe("concurrent charges", () => {
    test("200 at once against 1000 units spend exactly floor(1000 / 7) * 7", async () => {
      const { store, keyId, charge } = await storeWithKey();
      const outcomes = await Promise.all(Array.from({ length: 200 }, () => charge(7, 1000)));
      const granted = outcomes.filter((outcome) => outcome.ok);
      expect(granted).toHaveLength(142);
      // Every granted charge saw its own total: 7, 14, …, 994.
      expect(granted.map((outcome) => outcome.used).sort((a, b) => a - b)).toEqual(Array.from({ length: 142 }, (_, i) => 7 * (i + 1)));
      expect(outcomes.filter((outcome) => !outcome.ok).every((outcome) => outcome.used === 994)).toBe(true);
      expect(await store.unitsUsed(keyId, PERIOD)).toBe(994);
      await store.close();
    });

    test("two stores on the same location, charging at once, never overspend", async () => {
      const location = await kind.fresh();
      const { store: a, keyId } = await storeWithKey(location);
      const b = await kind.open(location);
      const charge = (store: Store) => store.charge({ keyId, period: PERIOD, units: 3, limit: 100 });
      const outcomes = await Promise.all(Array.from({ length: 100 }, (_, i) => charge(i % 2 ? a : b)));
      expect(outcomes.filter((outcome) => outcome.ok)).toHaveLength(33);
      expect(await a.unitsUsed(keyId, PERIOD)).toBe(99);
      expect(await b.unitsUsed(keyId, PERIOD)).toBe(99);
      await a.close();
      await b.close();
    });

    test("one group with several keys and months: each charge is decided in order against its own key and month", async () => {
      const location = await kind.fresh();
      const store = await kind.open(location);
      const a = (await store.createKey("a", "free")).key.id;
      const b = (await store.createKey("b", "free")).key.id;
      await store.charge({ keyId: a, period: "2026-11", units: 3, limit: 10 });
      // Queued in one turn, so committed as one group.
      const outcomes = await Promise.all([
        store.charge({ keyId: a, period: "2026-11", units: 6, limit: 10 }),
        store.charge({ keyId: b, period: "2026-11", units: 6, limit: 10 }),
        store.charge({ keyId: a, period: "2026-11", units: 2, limit: 10 }),
        store.charge({ keyId: a, period: "2026-12", units: 2, limit: 10 }),
        store.charge({ keyId: a, period: "2026-11", units: 1, limit: 10 }),
        store.charge({ keyId: a, period: "2026-11", units: 0, limit: 10 }),
        store.charge({ keyId: b, period: "2026-11", units: 4, limit: 10 }),
        store.charge({ keyId: b, period: "2026-11", units: 1, limit: 10 }),
      ]);
      expect(outcomes).toEqual([
        { ok: true, used: 9 },
        { ok: true, used: 6 },
        { ok: false, used: 9 },
        { ok: true, used: 2 },
        { ok: true, used: 10 },
        { ok: true, used: 10 },
        { ok: true, used: 10 },
        { ok: false, used: 10 },
      ]);
      await store.close();
      const reopened = await kind.open(location);
      expect(await reopened.unitsUsed(a, "2026-11")).toBe(10);
      expect(await reopened.unitsUsed(a, "2026-12")).toBe(2);
      expect(await reopened.unitsUsed(b, "2026-11")).toBe(10);
      await reopened.close();
    });
  });

  describe("failed commits", () => {
    test("a group whose transaction fails rejects every charge in it and applies none", async () => {
      const location = await kind.fresh();
      const { store, keyId } = await storeWithKey(location);
      const refused = (await store.createKey("refused", "free")).key.id;
      // The day rows of one key cannot be written (a trigger): the commit fails.
      await kind.refuseInserts(location, "usage_days", refused);
      const good = store.charge({ keyId, period: PERIOD, units: 1, limit: null });
      const bad = store.charge({ keyId: refused, period: PERIOD, units: 1, limit: null });
      const settled = await Promise.allSettled([good, bad]);
      expect(settled.map((outcome) => outcome.status)).toEqual(["rejected", "rejected"]);
      expect(await store.unitsUsed(keyId, PERIOD)).toBe(0);
      expect(await store.charge({ keyId, period: PERIOD, units: 1, limit: null })).toEqual({ ok: true, used: 1 });
      await store.close();
    });
  });

  describe("a key deleted behind the store (state copy --replace, psql, sqlite3)", () => {
    /** A store with three keys, each charged once: `gone` is then deleted on a connection of the test's own. */
    async function withKeyGone() {
      const location = await kind.fresh();
      const store = await kind.open(location);
      const [kept, near, gone] = await Promise.all(["kept", "near", "gone"].map(async (name) => (await store.createKey(name, "free")).key.id));
      for (const keyId of [kept!, near!, gone!]) await store.charge({ keyId, period: PERIOD, units: 1, limit: null });
      await kind.deleteKey(location, gone!);
      return { location, store, kept: kept!, near: near!, gone: gone! };
    }

    test("its charges find it gone and charge nothing; the other charges of the group are decided on their own", async () => {
      const { store, kept, near, gone } = await withKeyGone();
      // Queued in one turn, so committed as one group: `kept` fits at once, `near` crosses
      // 80% of its limit (decided one charge at a time on PostgreSQL).
      const outcomes = await Promise.all([
        store.charge({ keyId: kept, period: PERIOD, units: 2, limit: null }),
        store.charge({ keyId: gone, period: PERIOD, units: 1, limit: null }),
        store.charge({ keyId: near, period: PERIOD, units: 8, limit: 10 }),
        store.charge({ keyId: gone, period: PERIOD, units: 0, limit: 10 }),
        store.charge({ keyId: kept, period: PERIOD, units: 3, limit: null }),
        store.charge({ keyId: near, period: PERIOD, units: 2, limit: 10 }),
      ]);
      expect(outcomes).toEqual([
        { ok: true, used: 3 },
        { ok: false, used: 0, keyGone: true },
        { ok: true, used: 9 },
        { ok: false, used: 0, keyGone: true },
        { ok: true, used: 6 },
        { ok: false, used: 9 },
      ]);
      expect(await store.unitsUsed(kept, PERIOD)).toBe(6);
      expect(await store.unitsUsed(near, PERIOD)).toBe(9);
      expect(await store.unitsUsed(gone, PERIOD)).toBe(0);
      // The days sum to the units charged.
      expect((await store.usageByDay("2000-01-01", "2100-01-01")).reduce((sum, day) => sum + day.units, 0)).toBe(15);
      await store.close();
    });

    test("a group of its charges alone, and one of a single charge, charge nothing and throw nothing", async () => {
      const { store, kept, gone } = await withKeyGone();
      expect(await Promise.all([1, 2].map((units) => store.charge({ keyId: gone, period: PERIOD, units, limit: null })))).toEqual([
        { ok: false, used: 0, keyGone: true },
        { ok: false, used: 0, keyGone: true },
      ]);
      expect(await store.charge({ keyId: gone, period: "2026-12", units: 1, limit: 100 })).toEqual({ ok: false, used: 0, keyGone: true });
      expect(await store.charge({ keyId: kept, period: PERIOD, units: 1, limit: null })).toEqual({ ok: true, used: 2 });
      expect(await store.unitsUsed(gone, "2026-12")).toBe(0);
      await store.close();
    });
  });

  describe("closing", () => {
    test("close commits the charges still queued", async () => {
      const location = await kind.fresh();
      const { store, keyId, charge } = await storeWithKey(location);
      const queued = [charge(2, null), charge(3, null)];
      await store.close();
      expect(await Promise.all(queued)).toEqual([
        { ok: true, used: 2 },
        { ok: true, used: 5 },
      ]);
      const reopened = await kind.open(location);
      expect(await reopened.unitsUsed(keyId, PERIOD)).toBe(5);
      await reopened.close();
    });

    test("a closed store refuses charges; closing twice is harmless", async () => {
      const { store, charge } = await storeWithKey();
      await store.close();
      await store.close();
      await expect(charge(1, null)).rejects.toThrow(new StoreError("the store is closed"));
    });
  });

  describe("copying a store", () => {
    /** A store with a bit of everything: keys on several plans, one rotated, one revoked, a new plan, usage in two months. */
    async function populated() {
      const store = await kind.open(await kind.fresh(), { clock: steppingClock() });
      await store.setPlan("gold", { maxBatchSize: 5, monthlyUnits: null, rateLimit: 2 });
      await store.setPlan("free", { rateLimit: 9 });
      const a = await store.createKey("a", "free");
      const b = await store.createKey("b", "standard");
      const c = await store.createKey("c", "gold");
      const rotated = (await store.rotateKey(b.key.id))!;
      await store.revokeKey(c.key.id);
      await store.charge({ keyId: a.key.id, period: "2026-10", units: 40, limit: null });
      await store.charge({ keyId: a.key.id, period: "2026-11", units: 2, limit: null });
      await store.charge({ keyId: c.key.id, period: "2026-11", units: 7, limit: null });
      return { store, secrets: { a: a.secret, b: rotated.secret }, ids: { a: a.key.id, b: b.key.id, c: c.key.id } };
    }

    test("exportState reads every plan, key (with its hash and times) and usage row", async () => {
      const { store, secrets, ids } = await populated();
      const snapshot = await store.exportState();
      expect(snapshot.plans.map((plan) => plan.name)).toEqual(["free", "gold", "standard", "unlimited"]);
      expect(snapshot.plans[0]).toEqual({ name: "free", maxBatchSize: 100, monthlyUnits: 100_000, rateLimit: 9 });
      // Ticks 0 to 2 created the keys, 3 rotated b, 4 revoked c.
      expect(snapshot.keys).toEqual([
        { id: ids.a, name: "a", plan: "free", createdAt: "2026-11-01T00:00:00.000Z", revokedAt: null, secretHash: hashSecret(secrets.a), rotatedAt: null },
        { id: ids.b, name: "b", plan: "standard", createdAt: "2026-11-01T00:00:01.000Z", revokedAt: null, secretHash: hashSecret(secrets.b), rotatedAt: "2026-11-01T00:00:03.000Z" },
        { id: ids.c, name: "c", plan: "gold", createdAt: "2026-11-01T00:00:02.000Z", revokedAt: "2026-11-01T00:00:04.000Z", secretHash: expect.stringMatching(/^[0-9a-f]{64}$/), rotatedAt: null },
      ]);
      expect(snapshot.usage).toEqual([
        { keyId: ids.a, period: "2026-10", used: 40 },
        { keyId: ids.a, period: "2026-11", used: 2 },
        { keyId: ids.c, period: "2026-11", used: 7 },
      ]);
      await store.close();
    });

    test("importState into an empty store: the same snapshot, the keys authenticate, the change counter moves", async () => {
      const { store, secrets, ids } = await populated();
      const snapshot = await store.exportState();
      await store.close();
      const copy = await kind.open(await kind.fresh());
      const generation = (await copy.generation()).count;
      await copy.importState(snapshot);
      expect(await copy.exportState()).toEqual(snapshot);
      expect((await copy.generation()).count).toBeGreaterThan(generation);
      expect((await copy.findActiveKey(hashSecret(secrets.a)))?.key.id).toBe(ids.a);
      expect((await copy.findActiveKey(hashSecret(secrets.b)))?.plan).toEqual({ name: "standard", maxBatchSize: 1000, monthlyUnits: 10_000_000, rateLimit: 100 });
      expect((await copy.authSnapshot()).keysByHash.size).toBe(2);
      expect(await copy.unitsUsed(ids.a, "2026-10")).toBe(40);
      // Charges go on from the copied usage.
      expect(await copy.charge({ keyId: ids.a, period: "2026-11", units: 3, limit: 5 })).toEqual({ ok: true, used: 5 });
      await copy.close();
    });

    test("a store that holds keys is refused, changing nothing; replace makes it hold exactly the snapshot", async () => {
      const { store } = await populated();
      const snapshot = await store.exportState();
      await store.close();
      const target = await kind.open(await kind.fresh());
      const own = await target.createKey("own", "free");
      await target.setPlan("bronze", { maxBatchSize: 1, monthlyUnits: 1, rateLimit: 1 });
      const before = await target.exportState();
      const generation = (await target.generation()).count;
      await expect(target.importState(snapshot)).rejects.toThrow(/holds 1 key already/);
      expect(await target.exportState()).toEqual(before);
      expect((await target.generation()).count).toBe(generation);
      await target.importState(snapshot, { replace: true });
      expect(await target.exportState()).toEqual(snapshot);
      expect(await target.findActiveKey(hashSecret(own.secret))).toBeNull();
      expect(await target.getPlan("bronze")).toBeNull();
      await target.close();
    });

    test("an import's own audit entry is written with it, after the snapshot's entries, which a replace puts in place of the store's; a refused import writes none", async () => {
      const { store } = await populated();
      const entry = (action: string, at: string) => ({ at, actor: "cli", action, target: "state", changes: { keys: 3 } });
      const source = await store.exportState();
      const snapshot = { ...source, audit: [...(source.audit ?? []), { at: "2026-11-01T00:00:05.000Z", actor: "adm_aaaaaaaaaaaaaaaa", action: "key.updated", target: "key_x", changes: {} }] };
      await store.close();
      const target = await kind.open(await kind.fresh());
      await target.createKey("own", "free");
      const imported: unknown[] = [];
      const audit = (action: string) => (copied: StateSnapshot) => {
        imported.push(copied);
        return { entry: entry(action, "2026-11-02T00:00:00.000Z") };
      };
      await expect(target.importState(snapshot, { audit: audit("state.copied") })).rejects.toThrow(/holds 1 key already/);
      expect(await target.listAudit("2000-01-01T00:00:00.000Z", "2100-01-01T00:00:00.000Z", 10)).toEqual([]);
      await target.importState(snapshot, { replace: true, audit: audit("state.replaced") });
      expect(imported).toEqual([snapshot]);
      expect((await target.exportState()).audit).toEqual([...snapshot.audit, entry("state.replaced", "2026-11-02T00:00:00.000Z")]);
      await target.close();
    });

    test("an empty store keeps plans the snapshot does not name; those it names take the snapshot's values", async () => {
      const { store } = await populated();
      const snapshot = await store.exportState();
      await store.close();
      const target = await kind.open(await kind.fresh());
      await target.setPlan("bronze", { maxBatchSize: 1, monthlyUnits: 1, rateLimit: 1 });
      await target.setPlan("free", { rateLimit: 1 });
      await target.importState(snapshot);
      expect((await target.listPlans()).map((plan) => plan.name)).toEqual(["bronze", "free", "gold", "standard", "unlimited"]);
      expect((await target.getPlan("free"))?.rateLimit).toBe(9);
      await target.close();
    });

    test("an unsound snapshot is refused with the reason, changing nothing", async () => {
      const { store } = await populated();
      const good = await store.exportState();
      await store.close();
      const [first, second] = good.keys as [StateSnapshot["keys"][number], StateSnapshot["keys"][number]];
      const broken: [RegExp, StateSnapshot][] = [
        [/no valid secret hash/, { ...good, keys: [{ ...first, secretHash: "secret" }, ...good.keys.slice(1)] }],
        [/secret hash of another key/, { ...good, keys: [first, { ...second, secretHash: first.secretHash }, ...good.keys.slice(2)] }],
        [/appears twice/, { ...good, keys: [first, first] }],
        [/plan "platinum", which the snapshot does not hold/, { ...good, keys: [{ ...first, plan: "platinum" }] }],
        [/created_at that is not an ISO 8601 UTC time/, { ...good, keys: [{ ...first, createdAt: "yesterday" }] }],
        [/the key key_\w+ has a name with spaces at its start or end \(" a"\), which iplookup never writes/, { ...good, keys: [{ ...first, name: " a" }, ...good.keys.slice(1)] }],
        [/the key key_\w+ has a name iplookup does not accept: a key name must be 1 to 200 characters/, { ...good, keys: [{ ...first, name: "" }, ...good.keys.slice(1)] }],
        [/a key the snapshot does not hold/, { ...good, keys: [first] }],
        [/not a YYYY-MM period/, { ...good, usage: [{ keyId: first.id, period: "2026-13", used: 1 }] }],
        [/at least 1/, { ...good, usage: [{ keyId: first.id, period: "2026-11", used: 0 }] }],
        [/max_batch_size/, { ...good, plans: [...good.plans, { name: "bad", maxBatchSize: 0, monthlyUnits: null, rateLimit: null }] }],
      ];
      const target = await kind.open(await kind.fresh());
      const before = await target.exportState();
      for (const [reason, snapshot] of broken) {
        await expect(target.importState(snapshot)).rejects.toThrow(reason);
        await expect(target.importState(snapshot)).rejects.toThrow(StoreError);
      }
      expect(await target.exportState()).toEqual(before);
      await target.close();
    });
  });
}

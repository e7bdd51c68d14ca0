import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { copyFileSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { SCHEMA_VERSION } from "../../src/store/schema.ts";
import { hashSecret } from "../../src/store/secret.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { StateNotFoundError, StoreError } from "../../src/store/store.ts";
import { tempStatePaths } from "./temp-state.ts";

const freshPath = tempStatePaths();

/** A clock that moves one second a call, from 2026-11-01. */
function steppingClock(): () => Date {
  let tick = 0;
  return () => new Date(Date.UTC(2026, 10, 1) + 1000 * tick++);
}

function pragma(path: string, name: string): unknown {
  const db = new Database(path, { readonly: true });
  try {
    return Object.values(db.query(`PRAGMA ${name}`).get() as object)[0];
  } finally {
    db.close();
  }
}

describe("opening", () => {
  test("creates the file and its directories for the owner only; -wal and -shm too", async () => {
    const path = join(dirname(freshPath()), "deeper", "state.db");
    const store = SqliteStore.open(path);
    await store.createKey("k", "free");
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(path)).mode & 0o777).toBe(0o700);
    expect(statSync(dirname(dirname(path))).mode & 0o777).toBe(0o700);
    expect(statSync(`${path}-wal`).mode & 0o777).toBe(0o600);
    expect(statSync(`${path}-shm`).mode & 0o777).toBe(0o600);
    await store.close();
  });

  test("opens in WAL mode at the current schema version, with foreign keys on", async () => {
    const path = freshPath();
    const store = SqliteStore.open(path);
    expect(pragma(path, "journal_mode")).toBe("wal");
    expect(pragma(path, "user_version")).toBe(SCHEMA_VERSION);
    // A usage row for a key that does not exist breaks the foreign key.
    await expect(store.charge({ keyId: "key_none", period: "2026-11", units: 1, limit: null })).rejects.toThrow(/FOREIGN KEY/);
    await store.close();
  });

  test("seeds the plans once; reopening keeps changes and does not migrate again", async () => {
    const path = freshPath();
    const store = SqliteStore.open(path);
    expect(await store.listPlans()).toEqual([
      { name: "free", maxBatchSize: 100, monthlyUnits: 100_000, rateLimit: 10 },
      { name: "standard", maxBatchSize: 1000, monthlyUnits: 10_000_000, rateLimit: 100 },
      { name: "unlimited", maxBatchSize: 10_000, monthlyUnits: null, rateLimit: null },
    ]);
    await store.setPlan("free", { rateLimit: 5 });
    const generation = await store.generation();
    await store.close();
    const again = SqliteStore.open(path);
    expect((await again.getPlan("free"))?.rateLimit).toBe(5);
    expect(await again.listPlans()).toHaveLength(3);
    expect(await again.generation()).toBe(generation);
    await again.close();
  });

  test("create: false refuses a missing file with StateNotFoundError and creates nothing; an existing file opens", async () => {
    const path = join(dirname(freshPath()), "deeper", "state.db");
    expect(() => SqliteStore.open(path, { create: false })).toThrow(new StateNotFoundError(`there is no state file at ${path}`));
    expect(existsSync(dirname(dirname(path)))).toBe(false);
    await SqliteStore.open(path).close();
    const again = SqliteStore.open(path, { create: false });
    expect(await again.listPlans()).toHaveLength(3);
    await again.close();
  });

  test("an existing directory keeps its mode", async () => {
    const path = freshPath();
    mkdirSync(dirname(path), { mode: 0o755 });
    const store = SqliteStore.open(path);
    expect(statSync(dirname(path)).mode & 0o777).toBe(0o755);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    await store.close();
  });

  test("refuses a SQLite file of other tables, and leaves it alone", () => {
    const path = freshPath();
    mkdirSync(dirname(path));
    const other = new Database(path);
    other.run("CREATE TABLE ranges (start INTEGER)");
    other.close();
    const before = readFileSync(path);
    expect(() => SqliteStore.open(path)).toThrow(new StoreError(`${path} is a SQLite file but not an iplookup state file`));
    expect(readFileSync(path).equals(before)).toBe(true);
  });

  test("refuses a file that is not SQLite", () => {
    const path = freshPath();
    mkdirSync(dirname(path));
    writeFileSync(path, "name,plan\n".repeat(200));
    expect(() => SqliteStore.open(path)).toThrow(new StoreError(`${path} is not an iplookup state file (not a SQLite database)`));
    expect(readFileSync(path, "utf8")).toBe("name,plan\n".repeat(200));
  });

  test("refuses a file from a newer schema", async () => {
    const path = freshPath();
    await SqliteStore.open(path).close();
    const db = new Database(path);
    db.run(`PRAGMA user_version = ${SCHEMA_VERSION + 1}`);
    db.close();
    expect(() => SqliteStore.open(path)).toThrow(/newer than this iplookup knows/);
  });

  test("a copy of the file (a backup) opens with everything in it", async () => {
    const path = freshPath();
    const store = SqliteStore.open(path);
    const { key } = await store.createKey("k", "free");
    await store.charge({ keyId: key.id, period: "2026-11", units: 9, limit: null });
    await store.close();
    const copy = join(dirname(path), "copy.db");
    copyFileSync(path, copy);
    const restored = SqliteStore.open(copy);
    expect(await restored.getKey(key.id)).toEqual(key);
    expect(await restored.unitsUsed(key.id, "2026-11")).toBe(9);
    await restored.close();
  });
});

describe("keys", () => {
  test("only the SHA-256 of a secret reaches the disk", async () => {
    const path = freshPath();
    const store = SqliteStore.open(path);
    const { key, secret } = await store.createKey("acme", "free");
    const rotated = (await store.rotateKey(key.id))!;
    const onDisk = () => Buffer.concat([`${path}`, `${path}-wal`].filter(existsSync).map((file) => readFileSync(file)));
    // While open, the rows are in the WAL; after close, in the database file.
    for (const bytes of [onDisk(), await store.close().then(onDisk)]) {
      expect(bytes.includes(hashSecret(rotated.secret))).toBe(true);
      for (const leaked of [secret, secret.slice(4), rotated.secret, rotated.secret.slice(4)]) expect(bytes.includes(leaked)).toBe(false);
    }
  });

  test("a new key: formats, trimmed name, plan, time; the secret works once issued", async () => {
    const store = SqliteStore.open(freshPath(), { clock: () => new Date("2026-11-05T10:00:00Z") });
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
    const store = SqliteStore.open(freshPath(), { clock: steppingClock() });
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
    const store = SqliteStore.open(freshPath());
    const generation = await store.generation();
    await expect(store.createKey("x", "gold")).rejects.toThrow(new StoreError('there is no plan "gold"'));
    for (const name of ["", "   ", "x".repeat(201), "a\nb", "bell\u0007"]) {
      await expect(store.createKey(name, "free")).rejects.toThrow(StoreError);
    }
    expect((await store.createKey("x".repeat(200), "free")).key.name).toHaveLength(200);
    expect(await store.listKeys()).toHaveLength(1);
    expect(await store.generation()).toBe(generation + 1);
    await store.close();
  });

  test("setKeyPlan moves an active key to another plan; its secret, name and usage stay", async () => {
    const store = SqliteStore.open(freshPath());
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
    const store = SqliteStore.open(freshPath());
    const { key } = await store.createKey("k", "free");
    const generation = await store.generation();
    expect(await store.setKeyPlan("key_missing", "standard")).toBeNull();
    await expect(store.setKeyPlan(key.id, "gold")).rejects.toThrow(new StoreError('there is no plan "gold"'));
    expect(await store.getKey(key.id)).toEqual(key);
    const revoked = (await store.revokeKey(key.id))!;
    const afterRevoke = await store.generation();
    await expect(store.setKeyPlan(key.id, "standard")).rejects.toThrow(/was revoked on .*; a revoked key keeps its plan/);
    expect(await store.getKey(key.id)).toEqual(revoked);
    expect(afterRevoke).toBe(generation + 1);
    expect(await store.generation()).toBe(afterRevoke);
    await store.close();
  });

  test("findActiveKey reads one active key by its secret's hash, with its current plan", async () => {
    const store = SqliteStore.open(freshPath());
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
    const store = SqliteStore.open(freshPath());
    const { secret } = await store.createKey("k", "free");
    await store.setPlan("free", { monthlyUnits: 7, rateLimit: null });
    const active = (await store.authSnapshot()).keysByHash.get(hashSecret(secret));
    expect(active?.plan).toEqual({ name: "free", maxBatchSize: 100, monthlyUnits: 7, rateLimit: null });
    await store.close();
  });
});

describe("plans", () => {
  test("a new plan needs every field; an existing one keeps what is left out", async () => {
    const store = SqliteStore.open(freshPath());
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
    const store = SqliteStore.open(freshPath());
    const before = await store.listPlans();
    const generation = await store.generation();
    await expect(store.setPlan("free", { maxBatchSize: 0 })).rejects.toThrow(StoreError);
    await expect(store.setPlan("free", { maxBatchSize: 5, monthlyUnits: 1.5 })).rejects.toThrow(StoreError);
    await expect(store.setPlan("free", { rateLimit: -1 })).rejects.toThrow(StoreError);
    await expect(store.setPlan("bad name", { maxBatchSize: 1, monthlyUnits: 1, rateLimit: 1 })).rejects.toThrow(StoreError);
    expect(await store.listPlans()).toEqual(before);
    expect(await store.generation()).toBe(generation);
    await store.close();
  });
});

describe("the change counter", () => {
  test("moves on every key and plan change made by another store on the file, and only then", async () => {
    const path = freshPath();
    const server = SqliteStore.open(path);
    const cli = SqliteStore.open(path);
    let last = await server.generation();
    const moved = async () => {
      const now = await server.generation();
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
    expect((await server.authSnapshot()).generation).toBe(last);
    await cli.close();
    await server.close();
  });

  test("moves when any connection writes the tables, whatever SQL it uses", async () => {
    const path = freshPath();
    const store = SqliteStore.open(path);
    const { key } = await store.createKey("k", "free");
    const raw = new Database(path);
    for (const sql of [
      "UPDATE plans SET rate_limit = 1 WHERE name = 'standard'",
      "INSERT INTO plans VALUES ('bronze', 1, 1, 1)",
      "DELETE FROM plans WHERE name = 'bronze'",
      `UPDATE keys SET name = 'renamed' WHERE id = '${key.id}'`,
      `DELETE FROM keys WHERE id = '${key.id}'`,
    ]) {
      const before = await store.generation();
      raw.run(sql);
      expect(await store.generation()).toBe(before + 1);
    }
    raw.close();
    await store.close();
  });
});

import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { copyFileSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { SCHEMA_VERSION } from "../../src/store/schema.ts";
import { hashSecret } from "../../src/store/secret.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { StateNotFoundError, StoreError } from "../../src/store/store.ts";
import { downgradeSqlite } from "./downgrade.ts";
import { sqliteRawChanges } from "./raw-changes.ts";
import { storeSuite } from "./store-suite.ts";
import { tempStatePaths } from "./temp-state.ts";

const freshPath = tempStatePaths();

describe("the Store suite on SQLite", () => {
  storeSuite({ fresh: async () => freshPath(), open: async (path, options) => SqliteStore.open(path, options), ...sqliteRawChanges });
});

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
    // A connection's own setting: read on the store's connection.
    expect((store as unknown as { db: Database }).db.query<{ foreign_keys: number }, []>("PRAGMA foreign_keys").get()).toEqual({ foreign_keys: 1 });
    await store.close();
  });

  test("a state file of schema version 5 gains the store's id, keeping its counter; a server of version 5 still running reads and moves the counter as before", async () => {
    const path = freshPath();
    const store = SqliteStore.open(path);
    await store.createKey("old", "free");
    await store.close();
    // The connection of a server of version 5, open across the migration, with its statements prepared before it.
    const old = new Database(path);
    try {
      downgradeSqlite(old, 5);
      const oldCounter = () => old.query<{ value: number }, []>("SELECT value FROM generation WHERE id = 1").get()!.value;
      const count = oldCounter();
      const migrated = SqliteStore.open(path);
      expect(pragma(path, "user_version")).toBe(SCHEMA_VERSION);
      expect(await migrated.generation()).toEqual({ storeId: expect.stringMatching(/^[0-9a-f]{32}$/), count });
      expect(oldCounter()).toBe(count);
      // Its check that the file can be written, and a key it creates, which moves the counter for both.
      old.run("BEGIN IMMEDIATE");
      old.run("UPDATE generation SET value = value WHERE 0");
      old.run("ROLLBACK");
      old.query("INSERT INTO keys (id, name, plan, secret_hash, created_at) VALUES ('key_aaaaaaaaaaaaaaaa', 'from 5', 'free', ?1, ?2)").run(hashSecret("from 5"), new Date().toISOString());
      expect(oldCounter()).toBe(count + 1);
      expect((await migrated.generation()).count).toBe(count + 1);
      await migrated.close();
    } finally {
      old.close();
    }
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
});

describe("the change counter", () => {
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
      const before = (await store.generation()).count;
      raw.run(sql);
      expect((await store.generation()).count).toBe(before + 1);
    }
    raw.close();
    await store.close();
  });
});

describe("charges", () => {
  test("a write lock held past the busy timeout rejects the group with SQLITE_BUSY; later charges go through", async () => {
    const path = freshPath();
    const setup = SqliteStore.open(path);
    const keyId = (await setup.createKey("k", "free")).key.id;
    await setup.close();
    const store = SqliteStore.open(path, { busyTimeoutMs: 50 });
    const holder = new Database(path);
    holder.run("BEGIN IMMEDIATE");
    const started = performance.now();
    const settled = await Promise.allSettled([1, 2, 3].map((units) => store.charge({ keyId, period: "2026-11", units, limit: null })));
    expect(performance.now() - started).toBeGreaterThanOrEqual(45);
    for (const outcome of settled) {
      expect(outcome.status).toBe("rejected");
      expect((outcome as PromiseRejectedResult).reason).toMatchObject({ code: "SQLITE_BUSY" });
    }
    holder.run("COMMIT");
    holder.close();
    expect(await store.charge({ keyId, period: "2026-11", units: 4, limit: null })).toEqual({ ok: true, used: 4 });
    await store.close();
  });
});

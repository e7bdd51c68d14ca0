import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { SCHEMA_VERSION } from "../../src/store/schema.ts";
import { StateFileError } from "../../src/store/sqlite-faults.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { StateNotFoundError, StoreError } from "../../src/store/store.ts";
import { downgradeSqlite } from "./downgrade.ts";
import { tempStatePaths } from "./temp-state.ts";

/**
 * SqliteStore.open with `readOnly` (commands that only read: `keys list`, `usage`, the
 * source of `state copy`, …) changes nothing on disk: not the file's bytes, not its
 * schema, not its journal mode, and no -wal, -shm or journal appears beside it. A file of
 * an older schema is read through a migrated copy in a temporary folder of its own,
 * removed when the store closes, so that an older iplookup can still open it afterwards.
 */

const freshPath = tempStatePaths();
const PERIOD = "2026-11";

/** The file's bytes (as a hash) and every file in its folder. */
function look(path: string): { hash: string; folder: string[] } {
  return { hash: new Bun.CryptoHasher("sha256").update(readFileSync(path)).digest("hex"), folder: readdirSync(dirname(path)).sort() };
}

/** The schema version in the file's header (`PRAGMA user_version`), read without SQLite, which would make files beside it. */
function userVersion(path: string): number {
  return readFileSync(path).readUInt32BE(60);
}

/** The journal mode the header says: bytes 18 and 19 are 2 in WAL mode, 1 in rollback-journal mode. */
function headerJournal(path: string): "wal" | "delete" {
  const header = readFileSync(path);
  return header[18] === 2 && header[19] === 2 ? "wal" : "delete";
}

/** A state with a plan of its own, two keys, usage in PERIOD and an admin token, closed; answers the keys' ids. */
async function populate(path: string): Promise<{ gold: string; free: string }> {
  const store = SqliteStore.open(path);
  try {
    await store.setPlan("gold", { maxBatchSize: 50, monthlyUnits: 5000, rateLimit: 20 });
    const gold = (await store.createKey("acme", "gold")).key.id;
    const free = (await store.createKey("beta", "free")).key.id;
    await store.charge({ keyId: gold, period: PERIOD, units: 1200, limit: 5000, at: Date.parse("2026-11-02T08:00:00Z") });
    await store.charge({ keyId: free, period: PERIOD, units: 7, limit: 100_000, at: Date.parse("2026-11-02T09:00:00Z") });
    await store.createAdminToken("ops");
    return { gold, free };
  } finally {
    await store.close();
  }
}

/** Takes the closed state at `path` back to `version`, as an older iplookup left it, in the journal mode given. */
function downgrade(path: string, version: number, journal: "wal" | "delete"): void {
  const db = new Database(path);
  try {
    downgradeSqlite(db, version);
    if (journal === "delete") db.run("PRAGMA journal_mode = DELETE");
  } finally {
    db.close();
  }
}

/** What a reading command reads: the keys' names, their usage, the plans. */
async function readAll(store: SqliteStore, ids: { gold: string; free: string }) {
  return {
    keys: (await store.listKeys()).map((key) => `${key.name}:${key.plan}`),
    used: [await store.unitsUsed(ids.gold, PERIOD), await store.unitsUsed(ids.free, PERIOD)],
    plans: (await store.listPlans()).map((plan) => plan.name),
    snapshot: (await store.exportState()).keys.length,
  };
}

const EXPECTED = { keys: ["acme:gold", "beta:free"], used: [1200, 7], plans: ["free", "gold", "standard", "unlimited"], snapshot: 2 };

describe("SqliteStore.open with readOnly", () => {
  test.each([
    [5, "wal"],
    [5, "delete"],
    [1, "wal"],
  ] as const)("a state of schema %i (%s journal) is read from a migrated copy; the file stays as it was, byte for byte, at its version", async (version, journal) => {
    const path = freshPath();
    const ids = await populate(path);
    downgrade(path, version, journal);
    const before = look(path);
    expect(before.folder).toEqual(["state.db"]);
    const store = SqliteStore.open(path, { readOnly: true });
    try {
      expect(await readAll(store, ids)).toEqual(EXPECTED);
      // The store's id that migration 6 adds is the copy's: it reads.
      expect((await store.generation()).storeId).toMatch(/^[0-9a-f]{32}$/);
      expect(look(path)).toEqual(before);
    } finally {
      await store.close();
    }
    expect(look(path)).toEqual(before);
    expect(userVersion(path)).toBe(version);
    expect(headerJournal(path)).toBe(journal);
  });

  test("an older schema's copy is made in a folder of its own in the temporary folder, mode 0700, and removed when the store closes", async () => {
    const path = freshPath();
    const ids = await populate(path);
    downgrade(path, SCHEMA_VERSION - 1, "wal");
    const temporary = join(dirname(path), "tmp");
    mkdirSync(temporary);
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = temporary;
    try {
      const store = SqliteStore.open(path, { readOnly: true });
      try {
        const made = readdirSync(temporary);
        expect(made).toHaveLength(1);
        expect(statSync(join(temporary, made[0]!)).mode & 0o777).toBe(0o700);
        expect(await readAll(store, ids)).toEqual(EXPECTED);
      } finally {
        await store.close();
      }
      expect(readdirSync(temporary)).toEqual([]);
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
    }
  });

  test.each(["wal", "delete"] as const)("a state of the current schema (%s journal) is read in place, and nothing appears beside it", async (journal) => {
    const path = freshPath();
    const ids = await populate(path);
    if (journal === "delete") downgrade(path, SCHEMA_VERSION, "delete");
    const before = look(path);
    expect(before.folder).toEqual(["state.db"]);
    const store = SqliteStore.open(path, { readOnly: true });
    expect(await readAll(store, ids)).toEqual(EXPECTED);
    expect(look(path)).toEqual(before);
    await store.close();
    expect(look(path)).toEqual(before);
    expect(userVersion(path)).toBe(SCHEMA_VERSION);
    expect(headerJournal(path)).toBe(journal);
  });

  test("a state another connection has open (a server) is read through its -wal, what it committed included; nothing is added, and it goes on", async () => {
    const path = freshPath();
    const ids = await populate(path);
    const server = SqliteStore.open(path);
    try {
      // Committed into the -wal, not yet into the file.
      const late = (await server.createKey("late", "free")).key.id;
      expect(readFileSync(`${path}-wal`).length).toBeGreaterThan(0);
      const before = look(path);
      const store = SqliteStore.open(path, { readOnly: true });
      expect((await store.listKeys()).map((key) => key.name)).toEqual(["acme", "beta", "late"]);
      expect(await store.unitsUsed(ids.gold, PERIOD)).toBe(1200);
      await store.close();
      expect(look(path)).toEqual(before);
      expect((await server.charge({ keyId: late, period: PERIOD, units: 3, limit: 100_000 })).ok).toBe(true);
    } finally {
      await server.close();
    }
  });

  test("a missing file is refused with StateNotFoundError, and nothing is created, neither file nor folder", () => {
    const path = freshPath();
    expect(() => SqliteStore.open(path, { readOnly: true })).toThrow(new StateNotFoundError(`there is no state file at ${path}`));
    expect(existsSync(dirname(path))).toBe(false);
    mkdirSync(dirname(path));
    expect(() => SqliteStore.open(path, { readOnly: true, create: true })).toThrow(StateNotFoundError);
    expect(readdirSync(dirname(path))).toEqual([]);
  });

  test("a state of a newer iplookup is refused, as it is when opened to change it, and stays as it was", async () => {
    const path = freshPath();
    await populate(path);
    const db = new Database(path);
    db.run(`PRAGMA user_version = ${SCHEMA_VERSION + 1}`);
    db.close();
    const before = look(path);
    expect(() => SqliteStore.open(path, { readOnly: true })).toThrow(
      new StoreError(`${path} has schema version ${SCHEMA_VERSION + 1}, newer than this iplookup knows (${SCHEMA_VERSION}); use a newer iplookup`),
    );
    expect(look(path)).toEqual(before);
  });

  test("a file that is not iplookup's is refused, and stays as it was", () => {
    const path = freshPath();
    mkdirSync(dirname(path));
    writeFileSync(path, "not a database at all, but long enough to have a header of a hundred bytes...".repeat(4));
    const before = look(path);
    expect(() => SqliteStore.open(path, { readOnly: true })).toThrow(new StoreError(`${path} is not an iplookup state file (not a SQLite database)`));
    expect(look(path)).toEqual(before);
  });

  test.each([
    ["in place", SCHEMA_VERSION],
    ["on the migrated copy", 5],
  ] as const)("a write asked of the store fails %s, and the file stays as it was", async (_where, version) => {
    const path = freshPath();
    const ids = await populate(path);
    if (version !== SCHEMA_VERSION) downgrade(path, version, "wal");
    const before = look(path);
    const store = SqliteStore.open(path, { readOnly: true });
    try {
      await expect(store.createKey("more", "free")).rejects.toThrow(/read-?only/);
      await expect(Promise.resolve().then(() => store.charge({ keyId: ids.gold, period: PERIOD, units: 1, limit: 5000 }))).rejects.toThrow(/read-?only/);
      expect((await store.listKeys()).map((key) => key.name)).toEqual(["acme", "beta"]);
    } finally {
      await store.close();
    }
    expect(look(path)).toEqual(before);
  });

  test("a file in WAL mode that no process had open is read without locks: one written meanwhile by another process is told at close, to try again", async () => {
    const path = freshPath();
    await populate(path);
    const store = SqliteStore.open(path, { readOnly: true });
    expect(await store.listKeys()).toHaveLength(2);
    // Another process opens it, writes, and closes, which copies the WAL into the file.
    const writer = SqliteStore.open(path);
    await writer.createKey("meanwhile", "free");
    await writer.close();
    expect(existsSync(`${path}-wal`)).toBe(false);
    await expect(store.close()).rejects.toThrow(new StateFileError(`the state file ${path} was written by another process while this command read it; try again`));
  });
});

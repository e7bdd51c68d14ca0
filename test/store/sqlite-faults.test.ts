import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { truncateSync } from "node:fs";
import { dirname, join } from "node:path";
import type { DiskReadings } from "../../src/errors/disk-limits.ts";
import { isUnwritable, stateFileError, StateFileError, unwritableError, WriteFaults, type WriteFault } from "../../src/store/sqlite-faults.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { StoreUnavailableError } from "../../src/store/store.ts";
import { damageTable } from "../support/damaged-state.ts";
import { fillStateFile } from "../support/full-state.ts";
import { tempStatePaths } from "./temp-state.ts";

const freshPath = tempStatePaths();

/** The error `action` throws (it must throw). */
function thrownBy(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  throw new Error("expected an error");
}

describe("errors that mean the state file cannot be written", () => {
  test("SQLite's own SQLITE_FULL, SQLITE_READONLY and SQLITE_CANTOPEN, as bun:sqlite throws them", () => {
    const full = new Database(":memory:");
    full.run("CREATE TABLE t (x BLOB)");
    full.run("PRAGMA max_page_count = 2");
    const fullError = thrownBy(() => {
      for (;;) full.run("INSERT INTO t VALUES (randomblob(1000))");
    });
    expect(fullError).toMatchObject({ code: "SQLITE_FULL", errno: 13 });
    expect(isUnwritable(fullError)).toBe(true);

    const path = freshPath();
    SqliteStore.open(path).close();
    const readOnly = new Database(path, { readonly: true });
    const readOnlyError = thrownBy(() => readOnly.run("UPDATE generation SET value = value + 1"));
    readOnly.close();
    expect(readOnlyError).toMatchObject({ code: "SQLITE_READONLY" });
    expect(isUnwritable(readOnlyError)).toBe(true);

    const cantOpen = thrownBy(() => new Database(join(path, "no-such-folder", "x.db")));
    expect(cantOpen).toMatchObject({ code: "SQLITE_CANTOPEN", errno: 14 });
    expect(isUnwritable(cantOpen)).toBe(true);
  });

  test("the extended codes of those (errno & 0xff is the primary code): SQLITE_IOERR_*, SQLITE_READONLY_*", () => {
    // https://sqlite.org/rescode.html: SQLITE_IOERR_WRITE 778, SQLITE_IOERR_FSYNC 1034,
    // SQLITE_READONLY_DIRECTORY 1544, SQLITE_CANTOPEN_ISDIR 526.
    for (const [code, errno] of [["SQLITE_IOERR", 10], ["SQLITE_IOERR_WRITE", 778], ["SQLITE_IOERR_FSYNC", 1034], ["SQLITE_READONLY_DIRECTORY", 1544], ["SQLITE_CANTOPEN_ISDIR", 526]] as const) {
      expect(isUnwritable(Object.assign(new Error("x"), { name: "SQLiteError", code, errno }))).toBe(true);
    }
  });

  test("not a statement's own errors, a lock (tried again elsewhere), nor system errors", () => {
    const db = new Database(":memory:");
    db.run("CREATE TABLE t (x PRIMARY KEY)");
    db.run("INSERT INTO t VALUES (1)");
    const unique = thrownBy(() => db.run("INSERT INTO t VALUES (1)"));
    expect(unique).toMatchObject({ code: "SQLITE_CONSTRAINT_PRIMARYKEY" });
    expect(isUnwritable(unique)).toBe(false);
    expect(isUnwritable(thrownBy(() => db.run("SELECT nonsense FROM nowhere")))).toBe(false);
    expect(isUnwritable(Object.assign(new Error("locked"), { code: "SQLITE_BUSY", errno: 5 }))).toBe(false);
    expect(isUnwritable(Object.assign(new Error("no space"), { code: "ENOSPC", errno: -28 }))).toBe(false);
    expect(isUnwritable(undefined)).toBe(false);
  });

  test("become StoreUnavailableError (503 store_unavailable) naming the file and the reason", () => {
    const error = unwritableError("/srv/state.db", Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL", errno: 13 }));
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect(error.message).toBe("the state file /srv/state.db cannot be written: the disk is full (SQLITE_FULL)");
  });
});

describe("a charge on a state file that cannot be written", () => {
  test("fails with StoreUnavailableError and charges nothing; once it can be written, charges go through", async () => {
    const path = freshPath();
    const faults: WriteFault[] = [];
    const store = SqliteStore.open(path, { onWriteFault: (fault) => faults.push(fault) });
    const keyId = (await store.createKey("k", "free")).key.id;
    fillStateFile(store, keyId);
    const settled = await Promise.allSettled([1, 2, 3].map((units) => store.charge({ keyId, period: "2026-11", units, limit: null })));
    for (const outcome of settled) {
      expect(outcome.status).toBe("rejected");
      const reason = (outcome as PromiseRejectedResult).reason as Error;
      expect(reason).toBeInstanceOf(StoreUnavailableError);
      expect(reason.message).toBe(`the state file ${path} cannot be written: the disk is full (SQLITE_FULL)`);
      expect((reason.cause as { code?: unknown }).code).toBe("SQLITE_FULL");
    }
    expect(await store.unitsUsed(keyId, "2026-11")).toBe(0);
    // One report for the group of three, not one a charge.
    expect(faults).toMatchObject([{ writable: false, refused: 3 }]);
    // Space again (the usage rows that filled it removed): the next charge is written.
    (store as unknown as { db: Database }).db.run("DELETE FROM usage");
    expect(await store.charge({ keyId, period: "2026-11", units: 4, limit: null })).toEqual({ ok: true, used: 4 });
    expect(faults).toMatchObject([{ writable: false }, { writable: true, refused: 0 }]);
    await store.close();
  });
});

describe("reports of charges that cannot be written", () => {
  const full = unwritableError("/s.db", Object.assign(new Error("full"), { code: "SQLITE_FULL", errno: 13 }));

  test("the first failure, then at most one a minute with the charges refused meanwhile, then the first success", () => {
    let now = 0;
    const reports: WriteFault[] = [];
    const faults = new WriteFaults((fault) => reports.push(fault), () => now);
    faults.passed();
    faults.failed(full, 2);
    now = 30_000;
    faults.failed(full, 5);
    faults.failed(full, 1);
    expect(reports).toEqual([{ writable: false, error: full, refused: 2 }]);
    now = 60_000;
    faults.failed(full, 4);
    expect(reports).toEqual([{ writable: false, error: full, refused: 2 }, { writable: false, error: full, refused: 10 }]);
    faults.failed(full, 3);
    faults.passed();
    faults.passed();
    expect(reports.slice(2)).toEqual([{ writable: true, refused: 3 }]);
  });
});

describe("a state file that cannot be used at start", () => {
  test("names the file and the reason: a full disk", () => {
    const error = stateFileError("/srv/state.db", Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL", errno: 13 }), "write");
    expect(error).toBeInstanceOf(StateFileError);
    expect(error.message).toBe("the state file /srv/state.db cannot be written: the disk is full (SQLITE_FULL)");
  });

  test("names the file and the reason: a folder that cannot be created (the system's error)", () => {
    const error = stateFileError("/srv/x/state.db", Object.assign(new Error("EACCES: permission denied, mkdir '/srv/x'"), { code: "EACCES", path: "/srv/x" }), "write");
    expect(error.message).toBe("cannot create the state file /srv/x/state.db: /srv/x: permission denied (EACCES)");
  });

  test("a path through a file (not a folder) names the system's reason", () => {
    const path = freshPath();
    SqliteStore.open(path).close();
    const error = thrownBy(() => SqliteStore.open(join(path, "inside-a-file", "state.db")));
    expect(error).toBeInstanceOf(StateFileError);
    expect((error as Error).message).toStartWith(`cannot create the state file ${join(path, "inside-a-file", "state.db")}: `);
    expect((error as Error).message).toContain("(ENOTDIR)");
  });
});

describe("a server's state file whose write lock another process holds", () => {
  test("opens at once, however long the busy timeout: the check that it can be written does not wait for the lock", async () => {
    const path = freshPath();
    await SqliteStore.open(path).close();
    const holder = new Database(path);
    holder.run("BEGIN IMMEDIATE");
    try {
      // A wait for the lock would outlast the test's own timeout.
      const store = SqliteStore.open(path, { requireWritable: true, busyTimeoutMs: 40_000 });
      // The busy timeout it was given is back for what follows.
      expect(await store.listPlans()).not.toEqual([]);
      await store.close();
    } finally {
      holder.run("ROLLBACK");
      holder.close();
    }
  });
});

describe("a damaged state file", () => {
  test("a charge that reads a damaged page fails with StoreUnavailableError naming the file and the remedy, and is reported", async () => {
    const path = freshPath();
    const made = SqliteStore.open(path);
    const keyId = (await made.createKey("k", "free")).key.id;
    await made.close();
    damageTable(path, "usage");
    const faults: WriteFault[] = [];
    const store = SqliteStore.open(path, { onWriteFault: (fault) => faults.push(fault) });
    try {
      const failed = await store.charge({ keyId, period: "2026-11", units: 1, limit: null }).catch((error: unknown) => error);
      expect(failed).toBeInstanceOf(StoreUnavailableError);
      expect((failed as Error).message).toBe(`the state file ${path} is damaged (SQLITE_CORRUPT): restore it from a backup (docs/backups.md)`);
      expect(faults).toMatchObject([{ writable: false, refused: 1 }]);
    } finally {
      await store.close();
    }
  });

  test("one cut short refuses to open with StateFileError naming the file and the remedy", async () => {
    const path = freshPath();
    const made = SqliteStore.open(path);
    await made.createKey("k", "free");
    await made.close();
    truncateSync(path, 50_000);
    const error = thrownBy(() => SqliteStore.open(path, { create: false }));
    expect(error).toBeInstanceOf(StateFileError);
    expect((error as Error).message).toBe(`the state file ${path} is damaged (SQLITE_CORRUPT): restore it from a backup (docs/backups.md)`);
  });

  test("SQLITE_NOTADB met after the file opened: no SQLite file any more", () => {
    const notADatabase = Object.assign(new Error("file is not a database"), { code: "SQLITE_NOTADB", errno: 26 });
    expect(isUnwritable(notADatabase)).toBe(true);
    expect(unwritableError("/srv/state.db", notADatabase).message).toBe("the state file /srv/state.db is not a SQLite file (SQLITE_NOTADB): restore it from a backup (docs/backups.md)");
  });
});

describe("a write the system fails (SQLITE_IOERR_*) says why when the disk or the process's limits tell", () => {
  /** SQLite's extended codes: SQLITE_IOERR_SHMSIZE (the -shm cannot grow), SQLITE_IOERR_WRITE. */
  const shmSize = Object.assign(new Error("disk I/O error"), { code: "SQLITE_IOERR_SHMSIZE", errno: 10 | (19 << 8) });
  const write = Object.assign(new Error("disk I/O error"), { code: "SQLITE_IOERR_WRITE", errno: 778 });
  const disk = (readings: Partial<DiskReadings>): DiskReadings => ({ freeBytes: () => 10 ** 9, fileSizeLimit: () => undefined, fileSize: () => undefined, ...readings });

  test("a full disk, as a server that starts on one meets it: the -shm cannot grow", async () => {
    const path = freshPath();
    await SqliteStore.open(path).close();
    let asked = "";
    const full = disk({ freeBytes: (folder) => ((asked = folder), 16_384) });
    expect(stateFileError(path, shmSize, "write", full).message).toBe(`the state file ${path} cannot be written: the disk is full (SQLITE_IOERR_SHMSIZE)`);
    expect(asked).toBe(dirname(path));
    expect(unwritableError(path, write, full).message).toBe(`the state file ${path} cannot be written: the disk is full (SQLITE_IOERR_WRITE)`);
    // Room on the disk: the system's own failure.
    expect(stateFileError(path, shmSize, "write", disk({})).message).toBe(`the state file ${path} cannot be written: the system failed to read or write it (SQLITE_IOERR_SHMSIZE)`);
  });

  test("the file size limit (ulimit -f) reached by the file or its -wal", () => {
    const limited = (file: string) => disk({ fileSizeLimit: () => 153_600, fileSize: (path) => (path === file ? 153_600 : 4096) });
    for (const file of ["/srv/state.db", "/srv/state.db-wal"]) {
      expect(unwritableError("/srv/state.db", write, limited(file)).message).toBe("the state file /srv/state.db cannot be written: the file size limit was reached (ulimit -f: 153600 bytes; SQLITE_IOERR_WRITE)");
    }
    // A write the system cut short at the limit is SQLite's SQLITE_FULL.
    const full = Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL", errno: 13 });
    expect(unwritableError("/srv/state.db", full, limited("/srv/state.db-wal")).message).toBe("the state file /srv/state.db cannot be written: the file size limit was reached (ulimit -f: 153600 bytes; SQLITE_FULL)");
    // A limit far from the files' sizes is not what failed.
    expect(unwritableError("/srv/state.db", write, disk({ fileSizeLimit: () => 10 ** 9, fileSize: () => 153_600 })).message).toBe("the state file /srv/state.db cannot be written: the system failed to read or write it (SQLITE_IOERR_WRITE)");
  });

  test("a real charge past the file size limit (ulimit -f in a child shell)", () => {
    const path = freshPath();
    const blocks = 256;
    const child = Bun.spawnSync(["bash", "-c", `ulimit -f ${blocks} && exec "$@"`, "bash", process.execPath, join(import.meta.dir, "charge-until-refused.ts"), path], { stdout: "pipe", stderr: "pipe" });
    expect(child.stderr.toString()).toBe("");
    expect(child.stdout.toString()).toMatch(new RegExp(`^the state file ${path} cannot be written: the file size limit was reached \\(ulimit -f: ${blocks * 1024} bytes; SQLITE_(IOERR_WRITE|FULL)\\)\n$`));
  });
});

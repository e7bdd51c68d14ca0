import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SCHEMA_VERSION } from "../../src/store/schema.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { cli } from "../support/server-process.ts";
import { downgradeSqlite } from "../store/downgrade.ts";

const MAIN = join(import.meta.dir, "..", "..", "src", "main.ts");
const dir = mkdtempSync(join(tmpdir(), "iplookup-backup-"));
/** A state file of some megabytes, so that copying it takes a while and writes many pages. */
const state = join(dir, "state", "state.db");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

beforeAll(async () => {
  const store = SqliteStore.open(state);
  await store.createKey("real", "free");
  await store.close();
  const db = new Database(state);
  db.run(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40000)
    INSERT INTO keys (id, name, plan, secret_hash, created_at)
    SELECT 'key_filler' || i, printf('%.100c', 'x'), 'free', 'hash' || i, '2026-11-01T00:00:00.000Z' FROM n`);
  db.close();
});

/** A folder of its own for each backup, so that everything in it is the backup's doing. */
function freshFolder(name: string): string {
  const folder = join(dir, name);
  mkdirSync(folder);
  return folder;
}

describe("backup FILE", () => {
  test("no file it makes is ever readable by others, even under umask 022; the copy is complete and owner-only", async () => {
    const folder = freshFolder("watched");
    const target = join(folder, "copy.db");
    const child = Bun.spawn(["sh", "-c", 'umask 022 && exec "$0" "$@"', process.execPath, MAIN, "backup", target, "--state", state], {
      stdout: "pipe",
      stderr: "pipe",
    });
    // Look at the folder as often as possible while the copy is written.
    const seen = new Map<string, number>();
    let looks = 0;
    while (child.exitCode === null) {
      for (const name of readdirSync(folder)) {
        try {
          const mode = statSync(join(folder, name)).mode & 0o777;
          seen.set(`${name} ${mode.toString(8)}`, mode);
        } catch {}
      }
      looks++;
      await Bun.sleep(0);
    }
    expect(await child.exited).toBe(0);
    expect(looks).toBeGreaterThan(1);
    expect([...seen].filter(([, mode]) => mode !== 0o600).map(([file]) => file)).toEqual([]);
    expect(readdirSync(folder)).toEqual(["copy.db"]);
    expect(statSync(target).mode & 0o777).toBe(0o600);
    expect((JSON.parse(cli(["keys", "list", "--json", "--state", target]).stdout) as unknown[]).length).toBe(40_001);
  });

  test("a backup that fails part way (the disk full) leaves nothing behind and says why", () => {
    const folder = freshFolder("full");
    // A file size limit of 64 KiB stands in for a full disk: writes past it fail with EFBIG.
    const result = Bun.spawnSync(["sh", "-c", 'trap "" XFSZ; ulimit -f 64; umask 022; exec "$0" "$@"', process.execPath, MAIN, "backup", join(folder, "copy.db"), "--state", state], {
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(result.exitCode).toBe(1);
    expect(result.stderr.toString()).toStartWith(`iplookup: cannot back up ${state} to ${join(folder, "copy.db")}: `);
    expect(readdirSync(folder)).toEqual([]);
  });

  test("a file that is not a state file is refused, and nothing is written", () => {
    const folder = freshFolder("foreign");
    const notSqlite = join(folder, "notes.txt");
    writeFileSync(notSqlite, "not a database, but long enough to look at its header ".repeat(4));
    const result = cli(["backup", join(folder, "copy.db"), "--state", notSqlite]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`iplookup: ${notSqlite} is not an iplookup state file (not a SQLite database)\n`);
    expect(readdirSync(folder)).toEqual(["notes.txt"]);
  });

  test.each([
    ["the current schema", SCHEMA_VERSION],
    ["the previous schema", SCHEMA_VERSION - 1],
  ])("the state file (%s, in WAL mode, open in no process) is only read: byte for byte as it was, no -wal or -shm made beside it", async (_schema, version) => {
    const folder = freshFolder(`source-${version}`);
    const source = join(folder, "state.db");
    const store = SqliteStore.open(source);
    await store.createKey("real", "free");
    await store.close();
    if (version < SCHEMA_VERSION) {
      const db = new Database(source);
      downgradeSqlite(db, version);
      db.close();
    }
    const hash = () => new Bun.CryptoHasher("sha256").update(readFileSync(source)).digest("hex");
    const before = hash();
    expect(readdirSync(folder)).toEqual(["state.db"]);
    const target = join(freshFolder(`copy-${version}`), "copy.db");
    expect(cli(["backup", target, "--state", source])).toMatchObject({ code: 0, stderr: "" });
    expect(readdirSync(folder)).toEqual(["state.db"]);
    expect(hash()).toBe(before);
    // The schema version (PRAGMA user_version) of each, read from its header.
    expect([readFileSync(source).readUInt32BE(60), readFileSync(target).readUInt32BE(60)]).toEqual([version, version]);
  });

  test("a target whose folder does not exist is a bad argument", () => {
    const result = cli(["backup", join(dir, "no-such-folder", "copy.db"), "--state", state]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`iplookup: there is no directory ${join(dir, "no-such-folder")} to write copy.db in\n`);
  });
});

describe("backup FILE stopped part way", () => {
  /** A state file of 200 MB, so that the copy takes a moment to stop it in. */
  const big = join(dir, "big", "state.db");
  beforeAll(async () => {
    const store = SqliteStore.open(big);
    await store.createKey("real", "free");
    await store.close();
    const db = new Database(big);
    db.run("CREATE TABLE filler (b BLOB)");
    db.run("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50000) INSERT INTO filler SELECT zeroblob(4096) FROM n");
    db.close();
  }, 30_000);

  /** Starts a backup into `folder` (through `shell`, a command run with `sh -c`) and resolves once its copy is being written (SQLite's journal beside it). */
  async function copying(folder: string, shell = 'exec "$0" "$@"') {
    const before = new Set(readdirSync(folder));
    const child = Bun.spawn(["sh", "-c", shell, process.execPath, MAIN, "backup", join(folder, "copy.db"), "--state", big], { stdout: "pipe", stderr: "pipe" });
    const deadline = Date.now() + 10_000;
    while (!readdirSync(folder).some((name) => name.endsWith("-journal") && !before.has(name))) {
      if (Date.now() > deadline || child.exitCode !== null) {
        child.kill("SIGKILL");
        throw new Error("the backup was never seen copying");
      }
      await Bun.sleep(1);
    }
    return child;
  }

  test("SIGTERM, SIGINT or SIGHUP during the copy: nothing is left behind, and the exit is 128 + the signal's number", async () => {
    for (const [signal, code] of [["SIGTERM", 143], ["SIGINT", 130], ["SIGHUP", 129]] as const) {
      const folder = freshFolder(`stopped-${signal}`);
      const child = await copying(folder);
      child.kill(signal);
      expect(await child.exited).toBe(code);
      expect(readdirSync(folder)).toEqual([]);
    }
  }, 30_000);

  test("a SIGHUP the backup was started ignoring (nohup) stays ignored: the copy completes", async () => {
    const folder = freshFolder("nohup");
    const child = await copying(folder, 'trap "" HUP; exec "$0" "$@"');
    child.kill("SIGHUP");
    expect(await child.exited).toBe(0);
    expect(readdirSync(folder)).toEqual(["copy.db"]);
  });

  test("what a killed backup left is removed by a later backup of the same file once a day old; a newer one is left", async () => {
    const folder = freshFolder("killed");
    for (let killed = 0; killed < 2; killed++) {
      const child = await copying(folder);
      child.kill("SIGKILL");
      await child.exited;
    }
    const copies = readdirSync(folder).filter((name) => /^\.copy\.db\.partial-[0-9a-f]+$/.test(name));
    expect(copies).toHaveLength(2);
    const [oldCopy, newCopy] = copies as [string, string];
    expect(readdirSync(folder).sort()).toEqual([oldCopy, `${oldCopy}-journal`, newCopy, `${newCopy}-journal`].sort());
    // A leftover beside another file's backup is not this backup's to remove.
    writeFileSync(join(folder, ".other.db.partial-0123456789ab"), "");
    const old = new Date(Date.now() - 2 * 86_400_000);
    for (const name of [oldCopy, `${oldCopy}-journal`, ".other.db.partial-0123456789ab"]) utimesSync(join(folder, name), old, old);
    const result = cli(["backup", join(folder, "copy.db"), "--state", state]);
    expect(result.code).toBe(0);
    expect(readdirSync(folder).sort()).toEqual([".other.db.partial-0123456789ab", newCopy, `${newCopy}-journal`, "copy.db"].sort());
  }, 30_000);
});

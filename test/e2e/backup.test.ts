import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { cli } from "../support/server-process.ts";

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

  test("a target whose folder does not exist is a bad argument", () => {
    const result = cli(["backup", join(dir, "no-such-folder", "copy.db"), "--state", state]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`iplookup: there is no directory ${join(dir, "no-such-folder")} to write copy.db in\n`);
  });
});

import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { withStoreAt } from "../../src/cli/with-store.ts";
import { StateFileError } from "../../src/store/sqlite-faults.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-with-store-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("a command's write that finds the state file full names the file and the reason, not SQLite's bare words", async () => {
  const path = join(dir, "state.db");
  await SqliteStore.open(path).close();
  // SQLite's own SQLITE_FULL, as a full disk gives it.
  const full = new Database(":memory:");
  full.run("CREATE TABLE t (x BLOB)");
  full.run("PRAGMA max_page_count = 2");
  let sqliteFull: unknown;
  try {
    for (;;) full.run("INSERT INTO t VALUES (randomblob(1000))");
  } catch (error) {
    sqliteFull = error;
  }
  const failed = withStoreAt(path, { create: false }, async () => {
    throw sqliteFull;
  });
  await expect(failed).rejects.toBeInstanceOf(StateFileError);
  await expect(failed).rejects.toThrow(`the state file ${path} cannot be written: `);
  // Anything else goes on as it was thrown.
  await expect(withStoreAt(path, { create: false }, async () => { throw new Error("other"); })).rejects.toThrow(/^other$/);
});

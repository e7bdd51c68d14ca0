import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cli } from "../support/server-process.ts";
import { holdWriteLock } from "../support/write-lock.ts";

/**
 * A command that must write a state file whose write lock another process keeps (a
 * long transaction, a sqlite3 shell) for the whole busy timeout says so in one line,
 * naming the file and the cause, and exits 1; SQLite's own words were "database is
 * locked", with no file.
 */

const dir = mkdtempSync(join(tmpdir(), "iplookup-busy-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("keys create and keys revoke on a state file another process holds locked: the file and the cause, exit 1, nothing changed", async () => {
  const state = join(dir, "state.db");
  const created = cli(["keys", "create", "--name", "first", "--json", "--state", state]);
  expect(created.code).toBe(0);
  const { id } = JSON.parse(created.stdout) as { id: string };
  const holder = await holdWriteLock(state, 600_000);
  try {
    const line = `iplookup: the state file ${state} is busy: another process holds its write lock (a long transaction, a sqlite3 shell) and kept it while this command waited (SQLITE_BUSY); try again when it is done\n`;
    expect(cli(["keys", "create", "--name", "second", "--state", state])).toEqual({ code: 1, stdout: "", stderr: line });
    expect(cli(["keys", "revoke", id, "--state", state])).toEqual({ code: 1, stdout: "", stderr: line });
  } finally {
    await holder.kill();
  }
  const keys = JSON.parse(cli(["keys", "list", "--json", "--state", state]).stdout) as { name: string; revoked_at: string | null }[];
  expect(keys.map((key) => [key.name, key.revoked_at])).toEqual([["first", null]]);
});

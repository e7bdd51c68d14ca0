import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { osReason, systemErrorCode } from "../../src/errors/file-access.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";

/** A file that cannot be used is named with the system's reason, in words an operator reads. */
const dir = mkdtempSync(join(tmpdir(), "iplookup-file-access-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("a system error's code and its words; anything else is its own message", () => {
  expect(systemErrorCode({ code: "EACCES" })).toBe("EACCES");
  expect(systemErrorCode({ code: "SQLITE_FULL" })).toBeNull();
  expect(systemErrorCode(new Error("x"))).toBeNull();
  expect(osReason({ code: "EACCES" })).toBe("permission denied (EACCES)");
  expect(osReason({ code: "EROFS" })).toBe("read-only file system (EROFS)");
  expect(osReason({ code: "ENOTRECOVERABLE" })).toBe("enotrecoverable (ENOTRECOVERABLE)");
  expect(osReason(new Error("disk I/O error"))).toBe("disk I/O error");
});

test("a state file whose folder is a symbolic link to nothing says what is in the way, not 'eexist'", () => {
  const dangling = join(dir, "dangling");
  symlinkSync(join(dir, "nowhere"), dangling);
  const path = join(dangling, "state.db");
  expect(() => SqliteStore.open(path)).toThrow(`cannot create the state file ${path}: ${dangling}: something else is in its place (a file, or a symbolic link to nothing) (EEXIST)`);
});

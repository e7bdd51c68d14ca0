import { afterAll } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * A temporary directory for the calling test file, removed after its tests. Each call
 * of the returned function names a state file in a directory of its own, not created yet.
 */
export function tempStatePaths(): () => string {
  const root = mkdtempSync(join(tmpdir(), "iplookup-store-"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  let count = 0;
  return () => join(root, `s${++count}`, "state.db");
}

import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultDataPath } from "../../src/config/paths.ts";
import { runCliInProcess } from "../support/in-process-cli.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-copy-source-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("state copy from a missing source points to --from, not to --state; exit 1, nothing created", async () => {
  const [from, to] = [join(dir, "missing.db"), join(dir, "copy", "state.db")];
  expect(await runCliInProcess(defaultDataPath(), ["state", "copy", "--from", from, "--to", to])).toEqual({
    code: 1,
    stdout: "",
    stderr: `iplookup: there is no state file at ${from}; check --from (the state to copy from must exist)\n`,
  });
  expect(existsSync(join(dir, "copy"))).toBe(false);
});

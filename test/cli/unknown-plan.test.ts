import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultDataPath } from "../../src/config/paths.ts";
import { runCliInProcess } from "../support/in-process-cli.ts";

/**
 * An unknown plan is a name the state does not hold, not a bad value: keys create, keys
 * update and keys set-plan all refuse it with exit 1, the same words and the same hint,
 * and change nothing (docs/command-line.md).
 */

const dir = mkdtempSync(join(tmpdir(), "iplookup-unknown-plan-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const run = (args: string[]) => runCliInProcess(defaultDataPath(), args);
const refusal = 'iplookup: there is no plan "nope" (see \'iplookup plans list\')\n';

test("keys create, keys update and keys set-plan: exit 1, one message", async () => {
  const state = join(dir, "state.db");
  const created = await run(["keys", "create", "--name", "k", "--json", "--state", state]);
  expect(created.code).toBe(0);
  const { id } = JSON.parse(created.stdout) as { id: string };
  expect(await run(["keys", "create", "--name", "other", "--plan", "nope", "--state", state])).toEqual({ code: 1, stdout: "", stderr: refusal });
  expect(await run(["keys", "update", id, "--plan", "nope", "--state", state])).toEqual({ code: 1, stdout: "", stderr: refusal });
  expect(await run(["keys", "set-plan", id, "nope", "--state", state])).toEqual({ code: 1, stdout: "", stderr: refusal });
  const listed = JSON.parse((await run(["keys", "list", "--json", "--state", state])).stdout) as { name: string; plan: string }[];
  expect(listed.map((key) => [key.name, key.plan])).toEqual([["k", "free"]]);
});

test("keys create on a state it would create: exit 1, and no state file is left", async () => {
  const state = join(dir, "new", "state.db");
  expect(await run(["keys", "create", "--name", "k", "--plan", "nope", "--state", state])).toEqual({ code: 1, stdout: "", stderr: refusal });
  expect(existsSync(join(dir, "new"))).toBe(false);
});

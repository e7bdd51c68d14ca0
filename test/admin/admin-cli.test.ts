import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hashSecret } from "../../src/store/secret.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { cli } from "../support/server-process.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-admin-cli-"));
const env = { IPLOOKUP_STATE: join(dir, "state.db") };
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("admin --help, and each command's", () => {
  for (const args of [["admin", "--help"], ["admin", "create", "--help"], ["admin", "list", "--help"], ["admin", "revoke", "--help"]]) {
    const result = cli(args, env);
    expect({ args, code: result.code }).toEqual({ args, code: 0 });
    expect(result.stdout).toContain("Usage: iplookup admin");
  }
  expect(cli(["--help"], env).stdout).toContain("admin create");
});

test("admin create prints the token once, stores only its hash; list never shows it; revoke once", async () => {
  const printed = cli(["admin", "create", "--name", "  ops  "], env);
  expect(printed.code).toBe(0);
  const token = /ipla_[A-Za-z0-9_-]{43}/.exec(printed.stdout)![0];
  expect(printed.stdout).toContain("shown only now");

  const created = cli(["admin", "create", "--name", "ci", "--json"], env);
  const json = JSON.parse(created.stdout) as Record<string, string>;
  expect(Object.keys(json).sort()).toEqual(["id", "name", "token"]);
  expect(json.id).toMatch(/^adm_[a-z2-7]{16}$/);
  expect(json.token).toMatch(/^ipla_[A-Za-z0-9_-]{43}$/);
  expect(json.name).toBe("ci");

  const listed = cli(["admin", "list", "--json"], env);
  expect(listed.stdout).not.toContain("ipla_");
  const tokens = JSON.parse(listed.stdout) as { id: string; name: string; created_at: string; revoked_at: string | null }[];
  expect(tokens.map((token) => [token.name, token.revoked_at])).toEqual([["ops", null], ["ci", null]]);
  expect(cli(["admin", "list"], env).stdout).toMatch(/ID\s+NAME\s+ACCESS\s+CREATED\s+STATUS\n.*ops\s+read-write.*active/);

  const store = SqliteStore.open(env.IPLOOKUP_STATE);
  expect((await store.findAdminToken(hashSecret(token)))?.name).toBe("ops");
  expect((await store.findAdminToken(hashSecret(json.token!)))?.id).toBe(json.id);
  // Not an API key.
  expect(await store.findActiveKey(hashSecret(token))).toBeNull();
  await store.close();

  const revoked = cli(["admin", "revoke", json.id!], env);
  expect(revoked.code).toBe(0);
  expect(revoked.stdout).toContain(`Revoked admin token ${json.id} (ci)`);
  const again = cli(["admin", "revoke", json.id!], env);
  expect(again.code).toBe(1);
  expect(again.stderr).toContain("revoked on");
  const unknown = cli(["admin", "revoke", "adm_aaaaaaaaaaaaaaaa"], env);
  expect(unknown.code).toBe(1);
  expect(unknown.stderr).toContain("no admin token adm_aaaaaaaaaaaaaaaa");
});

test("bad command lines exit 2; read-only commands on a missing state exit 1 and create nothing", () => {
  for (const args of [["admin", "create"], ["admin", "create", "--name", "  "], ["admin", "revoke"], ["admin", "list", "extra"], ["admin", "frobnicate"]]) {
    expect({ args, code: cli(args, env).code }).toEqual({ args, code: 2 });
  }
  const missing = join(dir, "missing", "state.db");
  for (const args of [["admin", "list"], ["admin", "revoke", "adm_aaaaaaaaaaaaaaaa"]]) {
    expect({ args, code: cli([...args, "--state", missing]).code }).toEqual({ args, code: 1 });
  }
  expect(existsSync(join(dir, "missing"))).toBe(false);
});

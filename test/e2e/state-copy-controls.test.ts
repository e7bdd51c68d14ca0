import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { postgresAvailable, testStates } from "../support/postgres.ts";
import { cli } from "../support/server-process.ts";

/**
 * `state copy` and `backup` carry what CONTRACT §16 added: keys' controls, a rotated
 * key's old secret and its grace, read-only admin tokens and the audit log. Through the
 * command line, from a SQLite file to PostgreSQL and back, and into a backup.
 */
const dir = mkdtempSync(join(tmpdir(), "iplookup-copy-controls-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const states = testStates();

/** What the command line shows of a state: keys, admin tokens and the audit log, as JSON. */
function shown(state: string) {
  const env = { IPLOOKUP_STATE: state };
  const run = (args: string[]) => {
    const result = cli(args, env);
    expect({ args, code: result.code, stderr: result.stderr }).toEqual({ args, code: 0, stderr: "" });
    return JSON.parse(result.stdout) as unknown;
  };
  return { keys: run(["keys", "list", "--json"]), tokens: run(["admin", "list", "--json"]), audit: run(["audit", "--json"]) };
}

test.skipIf(!postgresAvailable)("state copy, SQLite to PostgreSQL and back, and backup keep the controls, the grace, read-only tokens and the audit log", async () => {
  const file = join(dir, "state.db");
  const env = { IPLOOKUP_STATE: file };
  const made = JSON.parse(
    cli(["keys", "create", "--name", "web", "--expires-at", "2099-01-01T00:00:00Z", "--allowed-cidrs", "203.0.113.0/24", "--allowed-origins", "https://app.example.com", "--metadata", '{"team":"maps"}', "--json"], env).stdout,
  ) as { id: string; key: string };
  const rotated = JSON.parse(cli(["keys", "rotate", made.id, "--grace", "2h", "--json"], env).stdout) as { key: string; grace_until: string };
  expect(rotated.grace_until).toMatch(/^\d{4}-\d{2}-\d{2}T/);
  expect(cli(["admin", "create", "--name", "auditor", "--read-only"], env).code).toBe(0);
  const original = shown(file);
  expect(original.keys).toEqual([expect.objectContaining({ id: made.id, allowed_cidrs: ["203.0.113.0/24"], allowed_origins: ["https://app.example.com"], metadata: { team: "maps" }, grace_until: rotated.grace_until })]);
  expect(original.tokens).toEqual([expect.objectContaining({ name: "auditor", read_only: true })]);
  expect((original.audit as { entries: { action: string }[] }).entries.map((entry) => entry.action)).toEqual(["admin_token.created", "key.rotated", "key.created"]);

  const database = await states.fresh();
  expect(cli(["state", "copy", "--from", file, "--to", database]).code).toBe(0);
  // Each copy adds its own entry, newest, to the entries it copied.
  const entries = (original.audit as { entries: unknown[] }).entries;
  const copied = (source: string, audit_entries: number) => ({
    at: expect.any(String),
    actor: "cli",
    action: "state.copied",
    target: "state",
    changes: { source, plans: 3, keys: 1, revoked_keys: 0, monthly_usage_rows: 0, units: 0, daily_usage_rows: 0, admin_tokens: 1, corrections: 0, webhooks: 0, audit_entries },
  });
  const there = copied(file, 3);
  expect(shown(database)).toEqual({ ...original, audit: { entries: [there, ...entries], next: null } });
  const back = join(dir, "back.db");
  expect(cli(["state", "copy", "--from", database, "--to", back]).code).toBe(0);
  expect(shown(back)).toEqual({ ...original, audit: { entries: [copied(database, 4), there, ...entries], next: null } });
  const backup = join(dir, "backup.db");
  expect(cli(["backup", backup], env).code).toBe(0);
  expect(shown(backup)).toEqual(original);
}, 60_000);

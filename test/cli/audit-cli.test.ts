import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { postgresAvailable, testStates } from "../support/postgres.ts";
import { cli } from "../support/server-process.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-audit-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("iplookup audit prints the newest 10,000 changes of a span, and says on standard error how to print the older ones when it holds more; exactly 10,000 says nothing", () => {
  const state = join(dir, "state.db");
  const env = { IPLOOKUP_STATE: state };
  expect(cli(["keys", "create", "--name", "first"], env).code).toBe(0);
  const day = (JSON.parse(cli(["audit", "--json"], env).stdout) as { entries: { at: string }[] }).entries[0]!.at.slice(0, 10);
  // 9,999 more changes that day, written straight into the log.
  const db = new Database(state);
  const insert = db.prepare("INSERT INTO audit_log (at, actor, action, target, changes) VALUES (?, 'cli', 'key.updated', 'key_x', '{}')");
  db.transaction(() => {
    for (let i = 0; i < 9_999; i++) insert.run(`${day}T00:00:00.${String(i % 1000).padStart(3, "0")}Z`);
  })();
  const exactly = cli(["audit", "--from", day, "--to", day, "--json"], env);
  expect((JSON.parse(exactly.stdout) as { entries: unknown[] }).entries).toHaveLength(10_000);
  expect(exactly.stderr).toBe("");
  insert.run(`${day}T00:00:00.000Z`);
  db.close();
  const shown = cli(["audit", "--from", day, "--to", day, "--json"], env);
  const page = JSON.parse(shown.stdout) as { entries: { target: string }[]; next: string };
  expect(page.entries).toHaveLength(10_000);
  for (const args of [["--json"], []]) {
    const more = cli(["audit", "--from", day, "--to", day, ...args], env);
    expect(more.code).toBe(0);
    expect(more.stderr).toBe(`the newest 10,000 changes from ${day} to ${day} are shown; there are more, older: iplookup audit --from ${day} --to ${day} --before ${page.next}\n`);
  }
  // The oldest change of the day, which the newest 10,000 left out, and nothing after it.
  const older = cli(["audit", "--from", day, "--to", day, "--before", page.next, "--json"], env);
  expect(older.stderr).toBe("");
  expect(JSON.parse(older.stdout)).toMatchObject({ entries: [{ action: "key.updated", at: `${day}T00:00:00.000Z` }], next: null });
  expect(page.entries[0]).toMatchObject({ action: "key.created" });
  expect(cli(["audit", "--before", "yesterday"], env)).toMatchObject({ code: 2, stderr: expect.stringContaining('--before: "yesterday" is not the "next" of an audit log answer') });
});

test("iplookup audit reads a creation as its fields, a plan's null limit as unlimited, and a change as from → to", () => {
  const env = { IPLOOKUP_STATE: join(dir, "plans.db") };
  expect(cli(["plans", "set", "gold", "--max-batch", "5", "--monthly-units", "unlimited", "--rate-limit", "unlimited"], env).code).toBe(0);
  expect(cli(["plans", "set", "gold", "--monthly-units", "100"], env).code).toBe(0);
  const printed = cli(["audit"], env).stdout;
  expect(printed).toContain("plan.created  plan:gold  max_batch_size: 5; monthly_units: unlimited; rate_limit: unlimited");
  expect(printed).toContain("plan.updated  plan:gold  monthly_units: unlimited → 100");
});

describe("iplookup audit --to near 0001-01-01: the default --from is 0001-01-01, the first day accepted", () => {
  const near = async (state: string) => {
    const env = { IPLOOKUP_STATE: state };
    expect(cli(["keys", "create", "--name", "early"], env).code).toBe(0);
    for (const to of ["0001-01-05", "0001-01-01"]) {
      expect({ to, ...cli(["audit", "--to", to, "--json"], env) }).toEqual({ to, code: 0, stdout: '{"entries":[],"next":null}\n', stderr: "" });
      expect({ to, ...cli(["audit", "--to", to], env) }).toEqual({ to, code: 0, stdout: `No changes recorded from 0001-01-01 to ${to}.\n`, stderr: "" });
    }
  };
  test("on a SQLite state file", () => near(join(dir, "early.db")));
  const states = testStates();
  test.skipIf(!postgresAvailable)("on PostgreSQL", async () => near(await states.fresh()));
});

describe("iplookup audit --to 9999-12-31, the last day accepted: its changes shown", () => {
  const AT = "9999-12-31T23:59:59.999Z";
  const last = async (state: string, write: (state: string) => Promise<void>) => {
    const env = { IPLOOKUP_STATE: state };
    expect(cli(["keys", "create", "--name", "late"], env).code).toBe(0);
    await write(state);
    const shown = cli(["audit", "--from", "9999-12-31", "--to", "9999-12-31", "--json"], env);
    expect({ code: shown.code, stderr: shown.stderr }).toEqual({ code: 0, stderr: "" });
    expect((JSON.parse(shown.stdout) as { entries: { at: string }[] }).entries.map((entry) => entry.at)).toEqual([AT]);
  };
  test("on a SQLite state file", () =>
    last(join(dir, "late.db"), async (state) => {
      const db = new Database(state);
      db.run("INSERT INTO audit_log (at, actor, action, target, changes) VALUES (?, 'cli', 'key.updated', 'key_x', '{}')", [AT]);
      db.close();
    }));
  const states = testStates();
  test.skipIf(!postgresAvailable)("on PostgreSQL", async () =>
    last(await states.fresh(), async (state) => {
      const sql = new SQL(state, { max: 1 });
      await sql`INSERT INTO audit_log (at, actor, action, target, changes) VALUES (${AT}, 'cli', 'key.updated', 'key_x', '{}')`;
      await sql.close();
    }));
});

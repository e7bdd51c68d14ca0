import { afterAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAdminApp } from "../../src/admin/admin-app.ts";
import { REDACTED } from "../../src/audit/audit-log.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { defaultIndex } from "../support/default-data.ts";
import { runCliInProcess } from "../support/in-process-cli.ts";
import { postgresAvailable, testStates } from "../support/postgres.ts";

/**
 * A secret given where free text goes (a metadata member's name, a plan's name) never
 * reaches the audit log, whichever way the change comes: the admin API (and the console,
 * which uses it) or the command line. A read-only token reads the log, so the log must
 * not hold what the token could not otherwise see.
 */
const dir = mkdtempSync(join(tmpdir(), "iplookup-audit-redaction-"));
const store = SqliteStore.open(":memory:");
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});
const index = defaultIndex();
const states = testStates();
const app = createAdminApp({ store, now: () => new Date(), version: "t", workers: 1, uptimeSeconds: () => 3, dataInfo: () => index.info });
const writer = await store.createAdminToken("ops");
const reader = await store.createReadOnlyAdminToken("auditor");

async function call(bearer: string, method: string, path: string, body?: unknown): Promise<{ status: number; text: string }> {
  const response = await app.handle(
    new Request(`http://admin${path}`, { method, headers: { authorization: `Bearer ${bearer}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) }),
  );
  return { status: response.status, text: await response.text() };
}

test("through the admin API: a secret as a metadata member's name or as a plan's name is redacted in the log a read-only token reads", async () => {
  const victim = await store.createKey("victim", "free");
  const subject = await store.createKey("subject", "free");
  expect((await call(writer.secret, "PATCH", `/admin/v1/keys/${subject.key.id}`, { metadata: { [victim.secret]: "x", [writer.secret]: "y" } })).status).toBe(200);
  expect((await call(writer.secret, "PUT", `/admin/v1/plans/${victim.secret}`, { max_batch_size: 1, monthly_units: null, rate_limit: null })).status).toBe(200);
  const read = await call(reader.secret, "GET", "/admin/v1/audit");
  expect(read.status).toBe(200);
  for (const secret of [victim.secret, writer.secret]) expect(read.text).not.toContain(secret);
  const entries = (JSON.parse(read.text) as { entries: { action: string; target: string; changes: Record<string, { to: unknown }> }[] }).entries;
  expect(entries.find((entry) => entry.action === "key.updated")?.changes.metadata?.to).toEqual({ [REDACTED]: "x", [`${REDACTED} (2)`]: "y" });
  expect(entries.find((entry) => entry.action === "plan.created")?.target).toBe(`plan:${REDACTED}`);
});

test("through the command line: the same", async () => {
  const state = join(dir, "state.db");
  const run = (...args: string[]) => runCliInProcess(join(dir, "no-data.db"), [...args, "--state", state]);
  const created = await run("keys", "create", "--name", "k", "--json");
  expect(created.code).toBe(0);
  const { id, key: secret } = JSON.parse(created.stdout) as { id: string; key: string };
  expect((await run("keys", "update", id, "--metadata", JSON.stringify({ [secret]: 1 }))).code).toBe(0);
  expect((await run("plans", "set", secret, "--max-batch", "1", "--monthly-units", "unlimited", "--rate-limit", "unlimited")).code).toBe(0);
  const audit = await run("audit", "--json");
  expect(audit.code).toBe(0);
  expect(audit.stdout).not.toContain(secret);
  expect(audit.stdout).toContain(`"target":"plan:${REDACTED}"`);
  expect(audit.stdout).toContain(`{"${REDACTED}":1}`);
});

/**
 * An entry written before the log scrubbed member names, target, actor and action (put
 * into the state file as it was then) is scrubbed when `state copy` carries it into
 * another state, SQLite or PostgreSQL: the copy does not keep the secret.
 */
for (const kind of ["SQLite", "PostgreSQL"] as const) {
  test.skipIf(kind === "PostgreSQL" && !postgresAvailable)(`state copy to ${kind}: an old entry's secret in a member name, the target, the actor and the action is redacted in the copy`, async () => {
    const source = join(dir, `old-${kind}.db`);
    const run = (...args: string[]) => runCliInProcess(join(dir, "no-data.db"), args);
    const created = await run("keys", "create", "--name", "k", "--json", "--state", source);
    expect(created.code).toBe(0);
    const { id, key: secret } = JSON.parse(created.stdout) as { id: string; key: string };
    const raw = new Database(source);
    raw.run("INSERT INTO audit_log (at, actor, action, target, changes) VALUES (?1, ?2, ?3, ?4, ?5)", [
      new Date().toISOString(),
      `cli ${secret}`,
      `key.updated ${secret}`,
      `${id} ${secret}`,
      JSON.stringify({ metadata: { from: null, to: { [secret]: "x", team: "maps" } } }),
    ]);
    raw.close();
    const destination = kind === "SQLite" ? join(dir, "copy.db") : await states.fresh();
    expect((await run("state", "copy", "--from", source, "--to", destination)).code).toBe(0);
    const audit = await run("audit", "--json", "--state", destination);
    expect(audit.code).toBe(0);
    expect(audit.stdout).not.toContain(secret);
    const old = (JSON.parse(audit.stdout) as { entries: { at: string; actor: string; action: string; target: string; changes: unknown }[] }).entries.find((entry) => entry.action.startsWith("key.updated"));
    expect(old).toEqual({
      at: expect.any(String),
      actor: `cli ${REDACTED}`,
      action: `key.updated ${REDACTED}`,
      target: `${id} ${REDACTED}`,
      changes: { metadata: { from: null, to: { [REDACTED]: "x", team: "maps" } } },
    });
  }, 30_000);
}

/**
 * A webhook entry written before the log recorded a webhook's URL in its shown form holds
 * the URL whole, path and query (where a receiver's secret may be) included: `state copy`
 * keeps only the shown form in the copy, SQLite or PostgreSQL.
 */
for (const kind of ["SQLite", "PostgreSQL"] as const) {
  test.skipIf(kind === "PostgreSQL" && !postgresAvailable)(`state copy to ${kind}: an old webhook entry's URL is its origin and /… in the copy`, async () => {
    const source = join(dir, `old-webhook-${kind}.db`);
    const run = (...args: string[]) => runCliInProcess(join(dir, "no-data.db"), args);
    expect((await run("keys", "create", "--name", "k", "--state", source)).code).toBe(0);
    const raw = new Database(source);
    raw.run("INSERT INTO audit_log (at, actor, action, target, changes) VALUES (?1, 'cli', 'webhook.removed', 'wh_oldentryoldentry', ?2)", [
      new Date().toISOString(),
      JSON.stringify({ url: { from: "http://127.0.0.1:43199/hook?token=copied-sekret", to: null }, events: { from: ["key.created"], to: null } }),
    ]);
    raw.close();
    const destination = kind === "SQLite" ? join(dir, "webhook-copy.db") : await states.fresh();
    expect((await run("state", "copy", "--from", source, "--to", destination)).code).toBe(0);
    // What the copy stores, not only what it shows.
    let rows: { target: string; changes: string }[];
    if (kind === "SQLite") {
      const copy = new Database(destination, { readonly: true });
      rows = copy.query("SELECT target, changes FROM audit_log").all() as typeof rows;
      copy.close();
    } else {
      const sql = new SQL(destination, { max: 1 });
      rows = [...(await sql`SELECT target, changes FROM audit_log`)] as typeof rows;
      await sql.close();
    }
    expect(JSON.stringify(rows)).not.toContain("sekret");
    const old = rows.find((row) => row.target === "wh_oldentryoldentry");
    expect(JSON.parse(old!.changes)).toEqual({ url: { from: "http://127.0.0.1:43199/…", to: null }, events: { from: ["key.created"], to: null } });
  }, 30_000);
}

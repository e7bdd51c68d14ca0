import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { existsSync, linkSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { emitExpiringKeys, expiringView } from "../../src/events/emit.ts";
import { openStore } from "../../src/store/open-store.ts";
import { hashSecret } from "../../src/store/secret.ts";
import type { StateSnapshot, Store } from "../../src/store/store.ts";
import { postgresAvailable, testStates } from "../support/postgres.ts";
import { cli } from "../support/server-process.ts";
import { runCliInProcess } from "../support/in-process-cli.ts";
import { downgradePostgres } from "../store/downgrade.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-state-copy-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const freshFile = () => join(dir, `state-${++files}.db`);
const states = testStates();

/** Runs a command line in this process; resolves to its exit code and what it printed. */
function run(...args: string[]) {
  return runCliInProcess(join(dir, "no-data.db"), args);
}

/** A connection of the test's own to a PostgreSQL state's database (its search_path the state's schema), for raw SQL. */
async function sqlOn<T>(url: string, work: (sql: SQL) => Promise<T>): Promise<T> {
  const sql = new SQL(url, { max: 1 });
  try {
    return await work(sql);
  } finally {
    await sql.close();
  }
}

async function using<T>(location: string, work: (store: Store) => Promise<T>): Promise<T> {
  const store = await openStore(location);
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

/** A state with two active keys (one rotated), a revoked one, a plan of its own, usage in two months, and an admin token. */
async function populate(location: string) {
  return using(location, async (store) => {
    await store.setPlan("gold", { maxBatchSize: 50, monthlyUnits: 5000, rateLimit: 20 });
    const a = await store.createKey("acme", "gold");
    const b = await store.createKey("beta", "free");
    const c = await store.createKey("gone", "standard");
    const rotated = (await store.rotateKey(b.key.id))!;
    await store.revokeKey(c.key.id);
    await store.charge({ keyId: a.key.id, period: "2026-10", units: 1200, limit: 5000, at: Date.parse("2026-10-15T12:00:00Z") });
    await store.charge({ keyId: a.key.id, period: "2026-11", units: 34, limit: 5000, at: Date.parse("2026-11-02T08:00:00Z") });
    await store.charge({ keyId: b.key.id, period: "2026-11", units: 7, limit: 100_000, at: Date.parse("2026-11-02T09:00:00Z") });
    await store.charge({ keyId: c.key.id, period: "2026-11", units: 5, limit: 10_000_000, at: Date.parse("2026-11-01T00:00:00Z") });
    const admin = await store.createAdminToken("ops");
    return { secrets: [a.secret, rotated.secret], ids: [a.key.id, b.key.id, c.key.id], adminSecret: admin.secret };
  });
}

/** What `state copy` copies of a state made by populate, counted as its audit entry counts it. */
const POPULATED = { plans: 4, keys: 3, revoked_keys: 1, monthly_usage_rows: 4, units: 1246, daily_usage_rows: 4, admin_tokens: 1, corrections: 0, webhooks: 0, audit_entries: 0 };

/** The audit entry a `state copy` from `source` (as shown, without a password) writes in its destination. */
function copyEntry(source: string, counted: Record<string, number>, action = "state.copied") {
  return { at: expect.any(String), actor: "cli", action, target: "state", changes: { source, ...counted } };
}

/** The copy holds what the source held, and after the source's audit log, the entries `copies` of the copies that made it. */
async function expectCopied(source: string, copy: string, copies: readonly object[]) {
  const [original, copied] = [await using(source, (store) => store.exportState()), await using(copy, (store) => store.exportState())];
  const held = original.audit!.length;
  expect({ ...copied, audit: copied.audit!.slice(0, held) } as StateSnapshot).toEqual(original);
  expect(copied.audit!.slice(held) as object[]).toEqual([...copies]);
}

/** The copy holds what the source held (see expectCopied), and every active key's secret (and the admin token) authenticates on it. */
async function expectSameState(source: string, copy: string, { secrets, ids, adminSecret }: Awaited<ReturnType<typeof populate>>, copies: readonly object[]) {
  await expectCopied(source, copy, copies);
  await using(copy, async (store) => {
    for (const secret of secrets) expect(await store.findActiveKey(hashSecret(secret))).not.toBeNull();
    for (const id of ids) for (const period of ["2026-10", "2026-11"]) {
      expect(await store.unitsUsed(id, period)).toBe(await using(source, (other) => other.unitsUsed(id, period)));
    }
    expect((await store.authSnapshot()).keysByHash.size).toBe(2);
    expect(await store.findAdminToken(hashSecret(adminSecret))).not.toBeNull();
    expect(await store.usageByDay("2026-10-01", "2026-11-30")).toEqual([
      { day: "2026-10-15", requests: 1, units: 1200 },
      { day: "2026-11-01", requests: 1, units: 5 },
      { day: "2026-11-02", requests: 2, units: 41 },
    ]);
  });
}

/**
 * A state whose key expires in 3 days, told by key.expiring to a webhook (delivered):
 * the state of a server that announced it. Answers the key's id.
 */
async function announced(location: string): Promise<string> {
  return using(location, async (store) => {
    await store.webhooks.createWebhook("http://127.0.0.1:9/hook", ["key.expiring"]);
    const now = new Date();
    const { key } = await store.createKey("ending", "free", { expiresAt: new Date(now.getTime() + 3 * 86_400_000).toISOString(), allowedCidrs: null, allowedOrigins: null, metadata: null });
    expect(await emitExpiringKeys(store, (await store.listKeys()).map(expiringView), now)).toBe(1);
    const [due] = await store.webhooks.claimDeliveries({ limit: 10, nowMs: now.getTime(), leaseMs: 60_000 });
    await store.webhooks.recordAttempt({ deliveryId: due!.deliveryId, eventId: due!.eventId, webhookId: due!.webhookId, attempt: 1, at: now.toISOString(), status: 200, durationMs: 1, response: "", error: null, state: "delivered", nextAttemptAt: null });
    return key.id;
  });
}

/** Gives `location` a webhook with one delivery pending (msg_pending), as a state in use has; answers the webhook's id. */
async function outboxOf(location: string): Promise<string> {
  return using(location, async (store) => {
    const { webhook } = await store.webhooks.createWebhook("http://127.0.0.1:9/hook", ["key.created"]);
    await store.webhooks.addEvent({ id: "msg_pending", type: "key.created", body: "{}", createdAt: new Date().toISOString() });
    return webhook.id;
  });
}

/** The expiry sweep, run on a copy as its first server runs it: it tells nothing again. */
async function expectNothingToldAgain(location: string): Promise<void> {
  await using(location, async (store) => {
    const now = new Date();
    expect(await emitExpiringKeys(store, (await store.listKeys()).map(expiringView), now)).toBe(0);
    expect(await store.webhooks.claimDeliveries({ limit: 10, nowMs: now.getTime() + 60_000, leaseMs: 60_000 })).toEqual([]);
  });
}

describe("state copy", () => {
  test("a key whose expiry was announced is not announced again by the copy", async () => {
    const [from, to] = [freshFile(), freshFile()];
    await announced(from);
    expect((await run("state", "copy", "--from", from, "--to", to)).code).toBe(0);
    await expectNothingToldAgain(to);
  });

  test("SQLite to SQLite: everything, and it says what it copied", async () => {
    const [from, to] = [freshFile(), freshFile()];
    const populated = await populate(from);
    const result = await run("state", "copy", "--from", from, "--to", to);
    expect(result).toEqual({ code: 0, stdout: `Copied 4 plans, 3 keys (1 revoked), 4 monthly usage rows (1,246 units), 4 daily usage rows and 1 admin token from ${from} to ${to}.\n`, stderr: "" });
    await expectSameState(from, to, populated, [copyEntry(from, POPULATED)]);
  });

  test("a destination that holds keys is refused and left alone; --replace replaces what it holds", async () => {
    const [from, to] = [freshFile(), freshFile()];
    await populate(from);
    const own = await using(to, (store) => store.createKey("own", "free"));
    const before = await using(to, (store) => store.exportState());
    const refused = await run("state", "copy", "--from", from, "--to", to);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe(`iplookup: ${to} holds 1 key already; copy into a new or empty state, or add --replace to replace its keys, plans, usage, admin tokens, corrections, webhooks and audit log with those of ${from}\n`);
    expect(await using(to, (store) => store.exportState())).toEqual(before);
    const replaced = await run("state", "copy", "--from", from, "--to", to, "--replace");
    expect(replaced.code).toBe(0);
    expect(replaced.stdout).toEndWith(`from ${from} to ${to}, replacing what it held.\n`);
    expect(await using(to, (store) => store.findActiveKey(hashSecret(own.secret)))).toBeNull();
    await expectCopied(from, to, [copyEntry(from, POPULATED, "state.replaced")]);
  });

  test("a missing source exits 1 and creates nothing; the same state twice, or a flag left out, exits 2", async () => {
    const [from, to] = [join(dir, "missing", "state.db"), freshFile()];
    const missing = await run("state", "copy", "--from", from, "--to", to);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toStartWith(`iplookup: there is no state file at ${from}`);
    expect(existsSync(from) || existsSync(to)).toBe(false);
    const file = freshFile();
    await populate(file);
    expect(await run("state", "copy", "--from", file, "--to", file)).toMatchObject({ code: 2, stderr: `iplookup: --from and --to name the same state (${file})\n` });
    expect((await run("state", "copy", "--from", file)).code).toBe(2);
    expect((await run("state", "copy", "--to", file)).code).toBe(2);
  });

  test("a source that cannot be copied (a key's name with spaces around it, written by other means) is refused before the destination is made, naming the source and the fault", async () => {
    const from = freshFile();
    const { ids } = await populate(from);
    const raw = new Database(from);
    raw.run("UPDATE keys SET name = ' acme ' WHERE id = ?1", [ids[0]!]);
    raw.close();
    const to = freshFile();
    const refused = await run("state", "copy", "--from", from, "--to", to);
    expect(refused).toEqual({
      code: 2,
      stdout: "",
      stderr: `iplookup: ${from} cannot be copied: the key ${ids[0]} has a name with spaces at its start or end (" acme "), which iplookup never writes; nothing was written to ${to}\n`,
    });
    expect(existsSync(to)).toBe(false);
  });

  test("a destination that holds corrections (and no key) is refused as one that holds keys, naming it and --replace", async () => {
    const [from, to] = [freshFile(), freshFile()];
    await populate(from);
    await using(to, (store) => store.putCorrection("198.51.100.0/24", { country_code: "FR" }, null));
    const before = await using(to, (store) => store.exportState());
    const refused = await run("state", "copy", "--from", from, "--to", to);
    expect(refused).toEqual({
      code: 2,
      stdout: "",
      stderr: `iplookup: ${to} holds 1 correction already; copy into a new or empty state, or add --replace to replace its keys, plans, usage, admin tokens, corrections, webhooks and audit log with those of ${from}\n`,
    });
    expect(await using(to, (store) => store.exportState())).toEqual(before);
  });

  test("the same state written otherwise (a symbolic link to the file, a hard link) is refused, --replace or not, and left as it was, its outbox included; a backup of it is another state", async () => {
    const file = freshFile();
    await populate(file);
    const hook = await outboxOf(file);
    const before = await using(file, (store) => store.exportState());
    const link = join(dir, `link-${files}.db`);
    symlinkSync(file, link);
    const hard = join(dir, `hard-${files}.db`);
    linkSync(file, hard);
    for (const to of [link, hard]) {
      for (const replace of [["--replace"], []]) {
        expect(await run("state", "copy", "--from", file, "--to", to, ...replace)).toEqual({ code: 2, stdout: "", stderr: `iplookup: --from and --to name the same state (${file})\n` });
        expect(await run("state", "copy", "--from", to, "--to", file, ...replace)).toEqual({ code: 2, stdout: "", stderr: `iplookup: --from and --to name the same state (${to})\n` });
      }
    }
    expect(await using(file, (store) => store.exportState())).toEqual(before);
    expect(await using(file, (store) => store.webhooks.listDeliveries(hook, 10))).toEqual([expect.objectContaining({ eventId: "msg_pending", state: "pending" })]);
    // A backup holds the same store id, and restoring it over the state is what --replace is for.
    const backup = freshFile();
    expect((await run("backup", backup, "--state", file)).code).toBe(0);
    expect((await run("state", "copy", "--from", backup, "--to", file, "--replace")).code).toBe(0);
  });
});

describe.skipIf(!postgresAvailable)("state copy with PostgreSQL", () => {
  test("a key whose expiry was announced is not announced again, SQLite to PostgreSQL and back", async () => {
    const [file, url, back] = [freshFile(), await states.fresh(), freshFile()];
    await announced(file);
    expect((await run("state", "copy", "--from", file, "--to", url)).code).toBe(0);
    await expectNothingToldAgain(url);
    expect((await run("state", "copy", "--from", url, "--to", back)).code).toBe(0);
    await expectNothingToldAgain(back);
  });

  test("SQLite to PostgreSQL and back: keys authenticate on each copy, usage is equal, the password is never shown", async () => {
    const file = freshFile();
    const populated = await populate(file);
    const url = new URL(await states.fresh());
    url.password = "pw-state-copy";
    const result = await run("state", "copy", "--from", file, "--to", url.href);
    const shown = url.href.replace(":pw-state-copy@", ":***@");
    expect(result).toEqual({ code: 0, stdout: `Copied 4 plans, 3 keys (1 revoked), 4 monthly usage rows (1,246 units), 4 daily usage rows and 1 admin token from ${file} to ${shown}.\n`, stderr: "" });
    const there = copyEntry(file, POPULATED);
    await expectSameState(file, url.href, populated, [there]);

    const back = freshFile();
    const returned = await run("state", "copy", "--from", url.href, "--to", back);
    expect(returned).toEqual({ code: 0, stdout: `Copied 4 plans, 3 keys (1 revoked), 4 monthly usage rows (1,246 units), 4 daily usage rows, 1 admin token and 1 audit entry from ${shown} to ${back}.\n`, stderr: "" });
    // The copy back records its source as shown: the password is not kept.
    await expectSameState(file, back, populated, [there, copyEntry(shown, { ...POPULATED, audit_entries: 1 })]);

    // Into a database that holds keys: refused, naming it without the password.
    const refused = await run("state", "copy", "--from", back, "--to", url.href);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toStartWith(`iplookup: ${shown} holds 3 keys already;`);
  });

  test("PostgreSQL to PostgreSQL, with --replace over a database in use", async () => {
    const [from, to] = [await states.fresh(), await states.fresh()];
    const populated = await populate(from);
    await populate(to);
    expect((await run("state", "copy", "--from", from, "--to", to, "--replace")).code).toBe(0);
    await expectSameState(from, to, populated, [copyEntry(from, POPULATED, "state.replaced")]);
  });

  test("a copy refused before anything is written leaves a PostgreSQL destination as it found it: an empty one without tables, an older schema holding keys and a correction not migrated", async () => {
    const from = freshFile();
    const { ids } = await populate(from);
    const raw = new Database(from);
    raw.run("UPDATE keys SET name = 'acme ' WHERE id = ?1", [ids[0]!]);
    raw.close();
    const tables = (url: string) => sqlOn(url, async (sql) => (await sql`SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename`).map((row: { tablename: string }) => row.tablename));
    const empty = await states.fresh();
    const unsound = await run("state", "copy", "--from", from, "--to", empty);
    expect(unsound.code).toBe(2);
    expect(unsound.stderr).toStartWith(`iplookup: ${from} cannot be copied: the key ${ids[0]} has a name with spaces at its start or end ("acme "), which iplookup never writes; nothing was written to ${empty}`);
    expect(await tables(empty)).toEqual([]);

    const sound = freshFile();
    await populate(sound);
    const older = await states.fresh();
    await using(older, async (store) => {
      await store.createKey("own", "free");
      await store.putCorrection("198.51.100.0/24", { country_code: "FR" }, null);
    });
    await sqlOn(older, (sql) => downgradePostgres(sql, 4));
    const held = await tables(older);
    expect(held).not.toContain("audit_log");
    const refused = await run("state", "copy", "--from", sound, "--to", older);
    expect(refused).toEqual({
      code: 2,
      stdout: "",
      stderr: `iplookup: ${older} holds 1 key and 1 correction already; copy into a new or empty state, or add --replace to replace its keys, plans, usage, admin tokens, corrections, webhooks and audit log with those of ${sound}\n`,
    });
    expect(await tables(older)).toEqual(held);
    expect(await sqlOn(older, async (sql) => (await sql`SELECT version FROM iplookup_schema`)[0].version)).toBe(4);
  });

  test("the same database written otherwise (localhost for 127.0.0.1, another spelling of the search_path) is refused, --replace or not, and left as it was; another schema of it is another state", async () => {
    const url = await states.fresh();
    await populate(url);
    const hook = await outboxOf(url);
    const before = await using(url, (store) => store.exportState());
    const local = new URL(url);
    local.hostname = "localhost";
    const schema = new URL(url).searchParams.get("options")!.replace("-c search_path=", "");
    const spelled = new URL(url);
    spelled.searchParams.set("options", `-c search_path=${schema},public`);
    for (const other of [local.href, spelled.href]) {
      for (const replace of [["--replace"], []]) {
        const refused = await run("state", "copy", "--from", url, "--to", other, ...replace);
        expect(refused).toEqual({ code: 2, stdout: "", stderr: `iplookup: --from and --to name the same state (${url})\n` });
      }
    }
    expect(await using(url, (store) => store.exportState())).toEqual(before);
    expect(await using(url, (store) => store.webhooks.listDeliveries(hook, 10))).toEqual([expect.objectContaining({ eventId: "msg_pending", state: "pending" })]);
    expect((await run("state", "copy", "--from", url, "--to", await states.fresh())).code).toBe(0);
  });

  test("no command shows a URL's password, whatever it prints and however it fails", async () => {
    const password = "pw-never-shown";
    const url = new URL(await states.fresh());
    url.password = password;
    const missingDatabase = new URL(url);
    missingDatabase.pathname = "/iplookup_test_no_such_database";
    const unreachable = `postgres://iplookup:${password}@127.0.0.1:1/iplookup`;
    const file = freshFile();
    await populate(file);
    const env = { IPLOOKUP_STATE: url.href };
    const outputs: string[] = [];
    const record = (result: { code: number | null; stdout: string; stderr: string }) => {
      outputs.push(result.stdout, result.stderr);
      return result;
    };
    // In child processes, as an operator runs them: everything they write is checked.
    const created = JSON.parse(record(cli(["keys", "create", "--name", "acme", "--json"], env)).stdout) as { id: string };
    expect(record(cli(["keys", "list"], env)).code).toBe(0);
    expect(record(cli(["keys", "set-plan", created.id, "standard"], env)).code).toBe(0);
    expect(record(cli(["plans", "list"], env)).code).toBe(0);
    expect(record(cli(["usage", created.id, "--json"], env)).code).toBe(0);
    expect(record(cli(["state", "copy", "--from", url.href, "--to", freshFile()])).code).toBe(0);
    expect(record(cli(["state", "copy", "--from", file, "--to", url.href])).code).toBe(2);
    expect(record(cli(["keys", "list"], { IPLOOKUP_STATE: missingDatabase.href })).code).toBe(1);
    expect(record(cli(["keys", "list", "--state", unreachable])).code).toBe(1);
    expect(record(cli(["keys", "create", "--name", "x", "--state", unreachable])).code).toBe(1);
    expect(record(cli(["state", "copy", "--from", unreachable, "--to", freshFile()])).code).toBe(1);
    expect(record(cli(["backup", join(dir, "backup.db")], env)).code).not.toBe(0);
    const all = outputs.join("\n");
    expect(all).toContain(":***@");
    expect(all).not.toContain(password);
  });
});

/**
 * A PostgreSQL database that is reached but refuses iplookup's statements, through no
 * fault of the request (CONTRACT §3, §9): a privilege revoked from iplookup's role, a
 * table gone from under the server or not whole yet (a restore under way), a database
 * that takes no writes. Lookups answer 503
 * store_unavailable with Retry-After and cost nothing, the server logs one line for it
 * (not one a request, and never "unhandled error"), and serves again by itself once the
 * database is put right: a read-only database's sessions are made again. A server in
 * the test process, on a database (and a role, `pgerr_…`) of this file's own. Skipped
 * when PostgreSQL cannot be reached.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { PostgresStore } from "../../src/store/postgres-store.ts";
import { databaseUrl, POSTGRES_ADMIN_URL, postgresAvailable, testStates } from "../support/postgres.ts";
import { startSocketServer, type SocketServer } from "../support/in-process-server.ts";

const states = testStates();
const role = `pgerr_${crypto.randomUUID().replaceAll("-", "").slice(0, 10)}`;
let database = "";
/** The superuser, on the administration database and on the server's. */
let admin: SQL;
let onDatabase: SQL;
let server: SocketServer;
let secret = "";

beforeAll(async () => {
  if (!postgresAvailable) return;
  const url = new URL(await states.freshDatabase());
  database = url.pathname.slice(1);
  admin = new SQL(POSTGRES_ADMIN_URL, { max: 1 });
  await admin.unsafe(`CREATE ROLE ${role} LOGIN`);
  await admin.unsafe(`ALTER DATABASE ${database} OWNER TO ${role}`);
  // iplookup's own role creates its tables, as in production (docs/postgresql.md).
  url.username = role;
  const store = await PostgresStore.open(url.href);
  ({ secret } = await store.createKey("refusals", "unlimited"));
  await store.close();
  onDatabase = new SQL(databaseUrl(database), { max: 1 });
  // One serving thread, so that its log lines are counted exactly.
  server = await startSocketServer({ state: url.href, workers: "1" });
}, 60_000);

afterAll(async () => {
  await server?.close();
  await onDatabase?.close();
  if (!admin) return;
  await admin.unsafe(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await admin.unsafe(`DROP ROLE IF EXISTS ${role}`);
  await admin.close();
}, 30_000);

const lookup = () =>
  fetch(`${server.url}/v1/lookup`, {
    method: "POST",
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
    body: JSON.stringify({ ip: "8.8.8.8" }),
  });

const unitsUsed = async () => Number((await onDatabase`SELECT coalesce(sum(used), 0)::int8 AS n FROM usage`)[0].n);

/** Sends lookups until one answers `status`, at most `tries` of them, `apart` ms apart; the last answer. */
async function lookupUntil(status: number, tries: number, apart: number): Promise<Response> {
  for (let i = 1; ; i++) {
    const response = await lookup();
    if (response.status === status || i === tries) return response;
    await response.arrayBuffer();
    await Bun.sleep(apart);
  }
}

async function expectStoreUnavailable(response: Response): Promise<void> {
  expect(response.status).toBe(503);
  expect(response.headers.get("retry-after")).toBe("2");
  expect(((await response.json()) as { code: string }).code).toBe("store_unavailable");
}

describe.skipIf(!postgresAvailable)("a database that refuses iplookup's statements", () => {
  test("a privilege revoked (REVOKE UPDATE ON usage): 503 store_unavailable, nothing charged, one log line; 200 once granted again", async () => {
    expect((await lookup()).status).toBe(200);
    const before = await unitsUsed();
    const logged = server.logs.length;
    await onDatabase.unsafe(`REVOKE UPDATE ON usage FROM ${role}`);
    try {
      for (let i = 0; i < 20; i++) await expectStoreUnavailable(await lookup());
      expect(await unitsUsed()).toBe(before);
      const lines = server.logs.slice(logged);
      expect(lines.filter((line) => line.includes("unhandled error"))).toEqual([]);
      const refused = lines.filter((line) => line.includes("refused a statement"));
      expect(refused).toHaveLength(1);
      expect(refused[0]).toContain("permission denied for table usage");
      expect(refused[0]).toContain('"sqlstate":"42501"');
      // The database is there and serves the polls: the server stays ready, and says
      // nothing of an unreachable store (no line every poll, each way).
      await Bun.sleep(600);
      for (let i = 0; i < 5; i++) await expectStoreUnavailable(await lookup());
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
      expect(server.logs.slice(logged).filter((line) => line.includes("state store cannot be reached") || line.includes("can be reached again"))).toEqual([]);
    } finally {
      await onDatabase.unsafe(`GRANT UPDATE ON usage TO ${role}`);
    }
    expect((await lookup()).status).toBe(200);
    expect(await unitsUsed()).toBe(before + 1);
  }, 30_000);

  test("a read of the keys refused (REVOKE SELECT ON keys): lookups go on with the keys held, the server stays ready, one line each way", async () => {
    const logged = server.logs.length;
    await onDatabase.unsafe(`REVOKE SELECT ON keys FROM ${role}`);
    try {
      // A change the servers must load: the poll's reload of the keys is refused.
      await onDatabase`UPDATE generation SET value = value + 1 WHERE id = 1`;
      await Bun.sleep(1000);
      expect((await lookup()).status).toBe(200);
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
      const lines = server.logs.slice(logged);
      expect(lines.filter((line) => line.includes("state store cannot be reached") || line.includes("can be reached again"))).toEqual([]);
      expect(lines.filter((line) => line.includes("reloading keys failed"))).toHaveLength(1);
    } finally {
      await onDatabase.unsafe(`GRANT SELECT ON keys TO ${role}`);
    }
    const back = performance.now();
    while (!server.logs.slice(logged).some((line) => line.includes("reloading keys works again")) && performance.now() - back < 5000) await Bun.sleep(50);
    expect(server.logs.slice(logged).filter((line) => line.includes("reloading keys works again"))).toHaveLength(1);
  }, 30_000);

  test("a table gone (undefined_table, 42P01): 503 store_unavailable, nothing charged, one log line; 200 once it is back", async () => {
    const before = await unitsUsed();
    const logged = server.logs.length;
    await onDatabase.unsafe("ALTER TABLE usage RENAME TO usage_away");
    try {
      for (let i = 0; i < 20; i++) await expectStoreUnavailable(await lookup());
      const lines = server.logs.slice(logged);
      expect(lines.filter((line) => line.includes("unhandled error"))).toEqual([]);
      expect(lines.filter((line) => line.includes("refused a statement") && line.includes('"sqlstate":"42P01"'))).toHaveLength(1);
    } finally {
      await onDatabase.unsafe("ALTER TABLE usage_away RENAME TO usage");
    }
    expect(await unitsUsed()).toBe(before);
    expect((await lookup()).status).toBe(200);
  }, 30_000);

  test("a primary key not back yet, as while pg_restore --clean runs (ON CONFLICT refused, 42P10): 503 store_unavailable, nothing charged, one log line, still ready; 200 once it is back", async () => {
    expect((await lookup()).status).toBe(200);
    const before = await unitsUsed();
    const logged = server.logs.length;
    await onDatabase.unsafe("ALTER TABLE usage DROP CONSTRAINT usage_pkey");
    try {
      for (let i = 0; i < 20; i++) await expectStoreUnavailable(await lookup());
      expect(await unitsUsed()).toBe(before);
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
      const lines = server.logs.slice(logged);
      expect(lines.filter((line) => line.includes("unhandled error"))).toEqual([]);
      const refused = lines.filter((line) => line.includes("refused a statement"));
      expect(refused).toHaveLength(1);
      expect(refused[0]).toContain('"sqlstate":"42P10"');
    } finally {
      await onDatabase.unsafe("ALTER TABLE usage ADD PRIMARY KEY (key_id, period)");
    }
    expect((await lookup()).status).toBe(200);
    expect(await unitsUsed()).toBe(before + 1);
  }, 30_000);

  test("a database that takes no writes, then does again: 503 store_unavailable meanwhile, and the server's read-only sessions are made again", async () => {
    const before = await unitsUsed();
    const logged = server.logs.length;
    // As a demoted primary, or an operator, would: the database read-only, its sessions ended.
    await admin.unsafe(`ALTER DATABASE ${database} SET default_transaction_read_only = on`);
    await admin`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ${database} AND pid <> pg_backend_pid()`;
    await onDatabase.close();
    onDatabase = new SQL(databaseUrl(database), { max: 1 });
    try {
      // The first lookups may meet a session just ended (57P01), also 503; then the writes are refused.
      await expectStoreUnavailable(await lookupUntil(200, 5, 50));
      for (let i = 0; i < 5; i++) await expectStoreUnavailable(await lookup());
      const lines = server.logs.slice(logged);
      expect(lines.filter((line) => line.includes("unhandled error"))).toEqual([]);
      // Told once: as a refused statement (25006), or, when a session just ended came
      // first and made the thread unready (its requests then answer 503 untried), as an
      // unreachable store.
      expect(lines.filter((line) => line.includes('"sqlstate":"25006"')).length).toBeLessThanOrEqual(1);
      expect(lines.filter((line) => line.includes('"sqlstate":"25006"') || line.includes("the state store cannot be reached"))).not.toEqual([]);
    } finally {
      await admin.unsafe(`ALTER DATABASE ${database} RESET default_transaction_read_only`);
    }
    expect(await unitsUsed()).toBe(before);
    // No session is ended this time: the server's own, read-only since they began, must go.
    const response = await lookupUntil(200, 40, 100);
    expect(response.status).toBe(200);
    expect(await unitsUsed()).toBe(before + 1);
  }, 30_000);

  test("a charge that runs out of its time (usage locked by another session, 57014): 503 store_unavailable, nothing charged, ready, and no refusal logged", async () => {
    expect((await lookup()).status).toBe(200);
    const before = await unitsUsed();
    const logged = server.logs.length;
    // A session of its own: onDatabase has one connection, which unitsUsed needs meanwhile.
    const locker = new SQL(databaseUrl(database), { max: 1 });
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    let locked = () => {};
    const holding = new Promise<void>((resolve) => (locked = resolve));
    const held = locker.begin(async (tx) => {
      await tx`LOCK TABLE usage IN ACCESS EXCLUSIVE MODE`;
      locked();
      await released;
    });
    try {
      await holding;
      // Each charge waits out its whole time (2 s) on the lock; concurrently, so in one group or two.
      const answers = await Promise.all(Array.from({ length: 4 }, () => lookup()));
      for (const response of answers) await expectStoreUnavailable(response);
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
      const lines = server.logs.slice(logged);
      expect(lines.filter((line) => line.includes("unhandled error"))).toEqual([]);
      // docs/postgresql.md: that line is for a privilege, a table gone, a read-only
      // database; a charge's own time running out is no refusal of the database's.
      expect(lines.filter((line) => line.includes("refused a statement"))).toEqual([]);
      expect(lines.filter((line) => line.includes('"sqlstate":"57014"'))).toEqual([]);
      expect(lines.filter((line) => line.includes("state store cannot be reached"))).toEqual([]);
    } finally {
      release();
      await held;
      await locker.close();
    }
    expect(await unitsUsed()).toBe(before);
    expect((await lookup()).status).toBe(200);
    expect(await unitsUsed()).toBe(before + 1);
  }, 30_000);

  test("a poll that fails for another reason on every tick (the change counter's row gone, as while pg_restore --clean runs): one line saying so, the keys held still serve; then one line when it works again", async () => {
    const logged = server.logs.length;
    const linesSaying = (text: string) => server.logs.slice(logged).filter((line) => line.includes(text));
    await onDatabase`DELETE FROM generation`;
    try {
      // The poll's first failure, then eight more polls (250 ms apart) that fail alike.
      for (let i = 0; i < 100 && linesSaying("change counter failed").length === 0; i++) await Bun.sleep(50);
      await Bun.sleep(2000);
      expect(linesSaying("reading the store's change counter failed")).toHaveLength(1);
      expect(linesSaying("reading the store's change counter failed")[0]).toContain("has no change counter: its table generation has no row");
      expect(linesSaying("TypeError")).toEqual([]);
      expect(linesSaying("works again")).toEqual([]);
      expect((await lookup()).status).toBe(200);
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    } finally {
      await onDatabase`INSERT INTO generation (id, value) VALUES (1, 1000000)`;
    }
    for (let i = 0; i < 100 && linesSaying("works again").length === 0; i++) await Bun.sleep(50);
    for (let i = 0; i < 100 && linesSaying("works again").length === 0; i++) await Bun.sleep(50);
    expect(linesSaying("reading the store's change counter works again")).toHaveLength(1);
    expect(linesSaying("reading the store's change counter failed")).toHaveLength(1);
  }, 30_000);
});

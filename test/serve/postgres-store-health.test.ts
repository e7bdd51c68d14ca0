/**
 * A server on PostgreSQL under a little load while the database misbehaves without going
 * away (CONTRACT §3, §9, §12): a table another session locks, a database that stops
 * taking writes. Asserted: every request answered 503 carries Retry-After and costs
 * nothing (the units stored are exactly the 200 answers'), /readyz, and one log line each
 * way. Each test has a database of its own (dropped after); only that database's
 * sessions are ever ended. Skipped when PostgreSQL cannot be reached.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { PostgresStore } from "../../src/store/postgres-store.ts";
import { POSTGRES_ADMIN_URL, postgresAvailable, testStates } from "../support/postgres.ts";
import { startServerProcess, type ServerProcess } from "../support/server-process.ts";

const states = testStates();
const servers: ServerProcess[] = [];
const opened: { close(): Promise<void> }[] = [];
afterAll(async () => {
  await Promise.all(servers.map((server) => server.stop("SIGKILL")));
  for (const item of opened) await item.close();
});

const DOWN = "the state store cannot be reached";
const UP = "the state store can be reached again";

interface Tally {
  ok: number;
  unavailable: number;
  other: number;
  missingRetryAfter: number;
}

/** Lookups on `secret`, `clients` at a time, until `stop` is set. */
function load(url: string | URL, secret: string, clients: number, stop: { done: boolean }): Promise<Tally> {
  const tally: Tally = { ok: 0, unavailable: 0, other: 0, missingRetryAfter: 0 };
  const client = async () => {
    while (!stop.done) {
      const response = await fetch(`${String(url).replace(/\/$/, "")}/v1/lookup`, {
        method: "POST",
        headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
        body: '{"ip":"1.1.1.1"}',
      });
      await response.arrayBuffer();
      if (response.status === 200) tally.ok++;
      else if (response.status === 503) {
        tally.unavailable++;
        if (!response.headers.get("retry-after")) tally.missingRetryAfter++;
      } else if (response.status === 429) await Bun.sleep(5);
      else tally.other++;
    }
  };
  return Promise.all(Array.from({ length: clients }, client)).then(() => tally);
}

async function readyz(server: ServerProcess): Promise<number> {
  const response = await fetch(`${server.url}/readyz`);
  await response.arrayBuffer();
  return response.status;
}

async function until(what: string, check: () => Promise<boolean> | boolean, ms = 15_000): Promise<void> {
  const deadline = performance.now() + ms;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`never: ${what}`);
    await Bun.sleep(50);
  }
}

function count(text: string, line: string): number {
  return text.split("\n").filter((l) => l.includes(line)).length;
}

async function setUp(rateLimit: number | null = null) {
  const url = await states.freshDatabase();
  const database = new URL(url).pathname.slice(1);
  const store = await PostgresStore.open(url);
  opened.push(store);
  await store.setPlan("unlimited", { maxBatchSize: 100, monthlyUnits: null, rateLimit: null });
  await store.setPlan("limited", { maxBatchSize: 100, monthlyUnits: null, rateLimit: rateLimit ?? 100_000 });
  const unlimited = await store.createKey("unlimited", "unlimited");
  const limited = await store.createKey("limited", "limited");
  const server = await startServerProcess(["--state", url]);
  servers.push(server);
  const admin = new SQL(POSTGRES_ADMIN_URL, { max: 1 });
  opened.push(admin);
  const direct = new SQL(url, { max: 2 });
  opened.push(direct);
  /** Ends the server's sessions on this test's own database, and no other. */
  const endSessions = () => admin`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ${database} AND application_name = 'iplookup'`;
  const units = async (keyId: string) => {
    const [row] = await direct`SELECT coalesce(sum(used), 0)::int8 AS used FROM usage WHERE key_id = ${keyId}`;
    const [days] = await direct`SELECT coalesce(sum(requests), 0)::int8 AS requests FROM usage_days WHERE key_id = ${keyId}`;
    return { used: Number(row.used), requests: Number(days.requests) };
  };
  return { url, database, store, server, admin, direct, endSessions, units, unlimited, limited };
}

describe.skipIf(!postgresAvailable)("a server on PostgreSQL when the database misbehaves", () => {
  test("a table lock held past a charge's time: 503 with Retry-After, and nothing answered 503 is stored once the lock is gone", async () => {
    const t = await setUp();
    const stop = { done: false };
    const running = load(t.server.url, t.unlimited.secret, 8, stop);
    await Bun.sleep(300);
    // Another session locks usage for 3 s: the charges in flight wait for it past their
    // 2 s, as do those that queue meanwhile.
    await t.direct.begin(async (tx) => {
      await tx`LOCK TABLE usage IN ACCESS EXCLUSIVE MODE`;
      await Bun.sleep(3000);
    });
    await Bun.sleep(300);
    stop.done = true;
    const tally = await running;
    console.log(`table lock: ${tally.ok} × 200, ${tally.unavailable} × 503`);
    expect(tally.unavailable).toBeGreaterThan(0);
    expect(tally.missingRetryAfter).toBe(0);
    expect(tally.other).toBe(0);
    // CONTRACT §3: a 503 is never charged. Before, the groups answered 503 committed once
    // the lock was freed, and the store held more units than the 200 answers.
    expect(await t.units(t.unlimited.key.id)).toEqual({ used: tally.ok, requests: tally.ok });
    // A lock says nothing about the database being away.
    expect(count(t.server.stderr(), DOWN)).toBe(0);
  }, 60_000);

  test("a database that stops taking writes: /readyz 503 and one line each way, steady while a rate-limited key is in use; nothing answered 503 is stored", async () => {
    const t = await setUp();
    const stop = { done: false };
    const running = [load(t.server.url, t.unlimited.secret, 3, stop), load(t.server.url, t.limited.secret, 3, stop)];
    await Bun.sleep(300);
    // A standby after a failover: sessions that take no writes.
    await t.admin.unsafe(`ALTER DATABASE ${t.database} SET default_transaction_read_only = on`);
    await t.endSessions();
    await until("/readyz 503 with the database read-only", async () => (await readyz(t.server)) === 503);
    // Steady: no flapping while both keys keep asking (before: a line each way every poll).
    for (let i = 0; i < 20; i++) {
      expect(await readyz(t.server)).toBe(503);
      await Bun.sleep(50);
    }
    expect(count(t.server.stderr(), DOWN)).toBe(1);
    expect(count(t.server.stderr(), UP)).toBe(0);
    // The load stops first: the sessions ended below (so that new ones take writes again)
    // would otherwise fail the charges in flight on them, an outage of its own.
    stop.done = true;
    const [unlimited, limited] = await Promise.all(running);
    await t.admin.unsafe(`ALTER DATABASE ${t.database} RESET default_transaction_read_only`);
    await t.endSessions();
    // No request needed: the poll's probe write finds the database writable.
    await until("/readyz 200 with the database writable again", async () => (await readyz(t.server)) === 200);
    console.log(`read-only database: unlimited ${unlimited!.ok} × 200, ${unlimited!.unavailable} × 503; limited ${limited!.ok} × 200, ${limited!.unavailable} × 503`);
    expect(unlimited!.unavailable + limited!.unavailable).toBeGreaterThan(0);
    expect(unlimited!.missingRetryAfter + limited!.missingRetryAfter).toBe(0);
    const stderr = t.server.stderr();
    expect(count(stderr, DOWN)).toBe(1);
    expect(count(stderr, UP)).toBe(1);
    expect(await t.units(t.unlimited.key.id)).toEqual({ used: unlimited!.ok, requests: unlimited!.ok });
    expect(await t.units(t.limited.key.id)).toEqual({ used: limited!.ok, requests: limited!.ok });
  }, 60_000);

  test("a rate-limit bucket locked by another session turns away the keys that lease from it, not an unlimited key, and the server stays ready", async () => {
    const t = await setUp();
    // The limited key's bucket exists once it has leased.
    const stop = { done: false };
    const running = [load(t.server.url, t.unlimited.secret, 2, stop), load(t.server.url, t.limited.secret, 2, stop)];
    await until("the limited key's bucket", async () => (await t.direct`SELECT 1 FROM rate_buckets`).length > 0);
    let readyDuringLock = true;
    await t.direct.begin(async (tx) => {
      await tx`LOCK TABLE rate_buckets IN ACCESS EXCLUSIVE MODE`;
      const end = performance.now() + 3000;
      while (performance.now() < end) {
        if ((await readyz(t.server)) !== 200) readyDuringLock = false;
        await Bun.sleep(100);
      }
    });
    await Bun.sleep(300);
    stop.done = true;
    const [unlimited, limited] = await Promise.all(running);
    console.log(`rate_buckets lock: unlimited ${unlimited!.ok} × 200, ${unlimited!.unavailable} × 503; limited ${limited!.ok} × 200, ${limited!.unavailable} × 503`);
    expect(limited!.unavailable).toBeGreaterThan(0);
    expect(limited!.missingRetryAfter).toBe(0);
    expect(unlimited!.unavailable).toBe(0);
    expect(readyDuringLock).toBe(true);
    expect(count(t.server.stderr(), DOWN)).toBe(0);
    expect(await t.units(t.unlimited.key.id)).toEqual({ used: unlimited!.ok, requests: unlimited!.ok });
    expect(await t.units(t.limited.key.id)).toEqual({ used: limited!.ok, requests: limited!.ok });
  }, 60_000);
});

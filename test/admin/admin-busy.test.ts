/**
 * CONTRACT §13 (and §12's rule for charges): an admin write on a state store whose lock
 * another process holds answers 503 store_unavailable, writes nothing, and never holds
 * the thread: the public port's health check, served by the same thread, answers first.
 * A change and its audit entry (§16) are one write: an entry that cannot be written,
 * for a lock or any other reason, leaves the change unmade.
 */
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hashSecret } from "../../src/store/secret.ts";
import { postgresAvailable, testStates } from "../support/postgres.ts";
import { cli, startServerProcess, type ServerProcess } from "../support/server-process.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-admin-busy-"));
const servers: ServerProcess[] = [];
afterAll(async () => {
  for (const server of servers) await server.stop("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

/** A server of one thread (the admin listener and the public port share it), its admin URL and an admin token. */
async function oneThreadServer(state: string) {
  const created = cli(["admin", "create", "--name", "ops", "--json"], { IPLOOKUP_STATE: state });
  expect(created.code).toBe(0);
  const token = (JSON.parse(created.stdout) as { token: string }).token;
  const server = await startServerProcess(["--state", state, "--workers", "1", "--admin-port", "0", "--log-level", "warn"]);
  servers.push(server);
  const admin = /"admin":"([^"]+)"/.exec(server.stderr())![1]!.replace(/\/$/, "");
  return { server, admin, token };
}

/** What an admin request answered 503 store_unavailable says: it changed nothing (it is charged nothing, unlike /v1's). */
const NOTHING_CHANGED = "the server cannot use its state store right now (it cannot reach it, or cannot write to it); nothing was changed, try again shortly";

async function startWithAdmin(state: string) {
  const { server, admin, token } = await oneThreadServer(state);
  const createKey = () =>
    fetch(`${admin}/admin/v1/keys`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify({ name: "while locked" }) });
  const putPlan = () =>
    fetch(`${admin}/admin/v1/plans/locked`, { method: "PUT", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify({ max_batch_size: 1, monthly_units: null, rate_limit: null }) });
  const listKeys = async () => ((await (await fetch(`${admin}/admin/v1/keys`, { headers: { authorization: `Bearer ${token}` } })).json()) as { keys: { id: string; plan: string }[] }).keys;
  const keyCount = async () => (await listKeys()).length;
  const moved = ((await (await createKey()).json()) as { id: string }).id;
  const patchKey = () =>
    fetch(`${admin}/admin/v1/keys/${moved}`, { method: "PATCH", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify({ plan: "standard" }) });
  const movedPlan = async () => (await listKeys()).find((key) => key.id === moved)?.plan;
  return { server, createKey, putPlan, patchKey, movedPlan, keyCount };
}

/** Sends the admin write, then a health check; the health check must answer first. */
async function writeWhileLocked(write: () => Promise<Response>, publicUrl: string) {
  const order: string[] = [];
  const written = write().then(async (response) => {
    order.push("admin");
    return { status: response.status, retryAfter: response.headers.get("retry-after"), type: response.headers.get("content-type"), body: (await response.json()) as { code: string; detail: string } };
  });
  await Bun.sleep(50);
  const health = await fetch(`${publicUrl}/healthz`);
  order.push("healthz");
  expect(health.status).toBe(200);
  const answer = await written;
  expect(order).toEqual(["healthz", "admin"]);
  return answer;
}

/** Runs `work` while another connection of this process holds the state file's write lock. */
async function holdingWriteLock(state: string, work: () => Promise<void>): Promise<void> {
  const holder = new Database(state);
  holder.run("PRAGMA busy_timeout = 5000");
  holder.run("BEGIN IMMEDIATE");
  holder.run("UPDATE generation SET value = value");
  try {
    await work();
  } finally {
    holder.run("ROLLBACK");
    holder.close();
  }
}

/** A key made through the admin API, and how to rotate it there and see the audit log's rotations of it. */
async function keyToRotate(admin: string, token: string) {
  const call = (method: string, path: string, body?: unknown) =>
    fetch(`${admin}/admin/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const created = await call("POST", "/keys", { name: "rotated" });
  expect(created.status).toBe(201);
  const key = (await created.json()) as { id: string; key: string };
  const rotations = async () =>
    ((await (await call("GET", "/audit")).json()) as { entries: { action: string; target: string }[] }).entries.filter(
      (entry) => entry.action === "key.rotated" && entry.target === key.id,
    ).length;
  return { key, rotate: () => call("POST", `/keys/${key.id}/rotate`), rotations };
}

/** Whether a key's secret is answered on the public port: true for a 200, false for a 401. */
async function works(publicUrl: string, secret: string): Promise<boolean> {
  const status = (await fetch(`${publicUrl}/v1/me`, { headers: { authorization: `Bearer ${secret}` } })).status;
  expect([200, 401]).toContain(status);
  return status === 200;
}

test("SQLite: a write lock held by another connection", async () => {
  const state = join(dir, "state.db");
  const { server, createKey, putPlan, patchKey, movedPlan, keyCount } = await startWithAdmin(state);
  const before = await keyCount();
  await holdingWriteLock(state, async () => {
    for (const write of [createKey, putPlan, patchKey]) {
      const answer = await writeWhileLocked(write, server.url);
      expect([answer.status, answer.body.code, answer.body.detail]).toEqual([503, "store_unavailable", NOTHING_CHANGED]);
      expect(Number(answer.retryAfter)).toBeGreaterThan(0);
    }
  });
  expect(await keyCount()).toBe(before);
  expect(await movedPlan()).toBe("free");
  expect((await createKey()).status).toBe(201);
  expect(await keyCount()).toBe(before + 1);
  expect((await putPlan()).status).toBe(200);
  expect((await patchKey()).status).toBe(200);
  expect(await movedPlan()).toBe("standard");
});

test("SQLite: webhooks added, removed or tested while another connection holds the write lock", async () => {
  const state = join(dir, "webhooks.db");
  const { server, admin, token } = await oneThreadServer(state);
  const call = (method: string, path: string, body?: unknown) =>
    fetch(`${admin}/admin/v1/webhooks${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const hook = { url: "http://127.0.0.1:9/hook", events: ["key.created"] };
  const kept = (await (await call("POST", "", hook)).json()) as { id: string };
  const listed = async () => ((await (await call("GET", "")).json()) as { webhooks: { id: string }[] }).webhooks.map((webhook) => webhook.id);
  await holdingWriteLock(state, async () => {
    for (const write of [() => call("POST", "", hook), () => call("DELETE", `/${kept.id}`), () => call("POST", `/${kept.id}/test`)]) {
      const answer = await writeWhileLocked(write, server.url);
      expect([answer.status, answer.body.code]).toEqual([503, "store_unavailable"]);
      expect(Number(answer.retryAfter)).toBeGreaterThan(0);
    }
  });
  expect(await listed()).toEqual([kept.id]);
  expect((await call("DELETE", `/${kept.id}`)).status).toBe(204);
  expect(await listed()).toEqual([]);
});

test("SQLite: corrections set or removed while another connection holds the write lock wait for it, as every admin write does", async () => {
  const state = join(dir, "corrections.db");
  const { server, admin, token } = await oneThreadServer(state);
  const call = (method: string, cidr: string, body?: unknown) =>
    fetch(`${admin}/admin/v1/corrections/${cidr}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const listed = async () =>
    ((await (await fetch(`${admin}/admin/v1/corrections`, { headers: { authorization: `Bearer ${token}` } })).json()) as { corrections: { cidr: string }[] }).corrections.map((c) => c.cidr);
  expect((await call("PUT", "198.51.100.0_24", { country_code: "FR" })).status).toBe(200);
  // A lock held past the wait: 503 after waiting (the health check answers first), nothing changed.
  await holdingWriteLock(state, async () => {
    for (const write of [() => call("PUT", "203.0.113.0_24", { country_code: "DE" }), () => call("DELETE", "198.51.100.0_24")]) {
      const answer = await writeWhileLocked(write, server.url);
      expect([answer.status, answer.body.code]).toEqual([503, "store_unavailable"]);
      expect(Number(answer.retryAfter)).toBeGreaterThan(0);
    }
  });
  expect(await listed()).toEqual(["198.51.100.0/24"]);
  // A lock held for a moment (a CLI command, a backup): the write waits it out and succeeds.
  const holder = new Database(state);
  holder.run("BEGIN IMMEDIATE");
  holder.run("UPDATE generation SET value = value");
  const put = call("PUT", "203.0.113.0_24", { country_code: "DE" });
  const removed = call("DELETE", "198.51.100.0_24");
  await Bun.sleep(300);
  holder.run("ROLLBACK");
  holder.close();
  expect([(await put).status, (await removed).status]).toEqual([200, 200]);
  expect(await listed()).toEqual(["203.0.113.0/24"]);
});

test("SQLite: a rotation whose audit entry cannot be written answers a problem, and the key keeps its secret", async () => {
  const state = join(dir, "audit-refused.db");
  const { server, admin, token } = await oneThreadServer(state);
  const { key, rotate, rotations } = await keyToRotate(admin, token);
  const db = new Database(state);
  db.run("PRAGMA busy_timeout = 5000");
  db.run("CREATE TRIGGER refuse_audit BEFORE INSERT ON audit_log BEGIN SELECT RAISE(ABORT, 'audit refused'); END");
  const refused = await rotate();
  // Not a refusal the contract names: a 500, in the problem shape, without internals.
  expect([refused.status, refused.headers.get("content-type")]).toEqual([500, "application/problem+json"]);
  expect(await refused.json()).toMatchObject({ status: 500, code: "internal_error" });
  expect(db.query("SELECT secret_hash FROM keys WHERE id = ?1").get(key.id)).toEqual({ secret_hash: hashSecret(key.key) });
  // Past the key cache's second: the secret works, as it did.
  await Bun.sleep(1500);
  expect(await works(server.url, key.key)).toBe(true);
  db.run("DROP TRIGGER refuse_audit");
  db.close();
  expect(await rotations()).toBe(0);
  expect((await rotate()).status).toBe(200);
  expect(await rotations()).toBe(1);
});

const states = testStates();
describe.skipIf(!postgresAvailable)("PostgreSQL", () => {
  test("a lock held by another session on the tables the write needs", async () => {
    const state = await states.fresh();
    const { server, createKey, putPlan, patchKey, movedPlan, keyCount } = await startWithAdmin(state);
    const before = await keyCount();
    const holder = new SQL(state, { max: 1 });
    const release = Promise.withResolvers<void>();
    const locked = Promise.withResolvers<void>();
    // Reads go on (EXCLUSIVE allows ACCESS SHARE); inserts and updates wait.
    const held = holder.begin(async (tx) => {
      await tx`LOCK TABLE keys, plans IN EXCLUSIVE MODE`;
      locked.resolve();
      await release.promise;
    });
    await locked.promise;
    try {
      for (const write of [createKey, putPlan, patchKey]) {
        const answer = await writeWhileLocked(write, server.url);
        expect([answer.status, answer.body.code, answer.body.detail]).toEqual([503, "store_unavailable", NOTHING_CHANGED]);
      }
    } finally {
      release.resolve();
      await held;
      await holder.close();
    }
    expect(await keyCount()).toBe(before);
    expect(await movedPlan()).toBe("free");
    expect((await createKey()).status).toBe(201);
    expect((await putPlan()).status).toBe(200);
    expect((await patchKey()).status).toBe(200);
    expect(await movedPlan()).toBe("standard");
  });

  test("a rotation whose audit entry meets a lock held on the audit log answers 503, and the key keeps its secret", async () => {
    const state = await states.fresh();
    const { server, admin, token } = await oneThreadServer(state);
    const { key, rotate, rotations } = await keyToRotate(admin, token);
    const holder = new SQL(state, { max: 1 });
    const release = Promise.withResolvers<void>();
    const locked = Promise.withResolvers<void>();
    // The keys are free: the rotation itself goes through, and only its entry waits.
    const held = holder.begin(async (tx) => {
      await tx`LOCK TABLE audit_log IN EXCLUSIVE MODE`;
      locked.resolve();
      await release.promise;
    });
    await locked.promise;
    let answer: Awaited<ReturnType<typeof writeWhileLocked>>;
    try {
      answer = await writeWhileLocked(rotate, server.url);
    } finally {
      release.resolve();
      await held;
    }
    expect([answer.status, answer.type, answer.body.code]).toEqual([503, "application/problem+json", "store_unavailable"]);
    expect(Number(answer.retryAfter)).toBeGreaterThan(0);
    expect(await holder`SELECT secret_hash FROM keys WHERE id = ${key.id}`).toEqual([{ secret_hash: hashSecret(key.key) }]);
    await holder.close();
    // The answer came after the lock's two seconds, past the key cache's second: the secret works, as it did.
    expect(await works(server.url, key.key)).toBe(true);
    expect(await rotations()).toBe(0);
    expect((await rotate()).status).toBe(200);
    expect(await rotations()).toBe(1);
  });
});

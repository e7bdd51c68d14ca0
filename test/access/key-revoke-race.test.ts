import { afterAll, describe, expect, spyOn, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAdminTokenAudited, revokeAdminTokenAudited } from "../../src/access/admin-token-service.ts";
import { KeyService } from "../../src/access/key-service.ts";
import { createAdminApp } from "../../src/admin/admin-app.ts";
import { AuditLog, CLI_ACTOR } from "../../src/audit/audit-log.ts";
import { PostgresStore } from "../../src/store/postgres-store.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import type { AuditEntry, Store } from "../../src/store/store.ts";
import { defaultIndex } from "../support/default-data.ts";
import { runCliInProcess } from "../support/in-process-cli.ts";
import { postgresAvailable, testStates } from "../support/postgres.ts";

/**
 * A key revoked by two servers at once (two admin APIs, or the console and the CLI) is
 * revoked once: one key.revoked event and one audit entry (CONTRACT §16), however the
 * two interleave. Each server decides whether it revoked the key inside the transaction
 * that revokes it, and only the one that did says so.
 */

const ROUNDS = 12;
const states = testStates();

async function revokedOnce(open: () => Promise<Store>): Promise<void> {
  const [first, second] = [await open(), await open()];
  await first.webhooks.createWebhook("http://127.0.0.1:9/x", ["key.revoked"]);
  const services = [first, second].map((store) => new KeyService(store, new AuditLog(store), { now: () => new Date() }));
  const ids: string[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const { key } = await services[0]!.create("cli", `k${round}`, "free");
    ids.push(key.id);
    const answers = await Promise.all(services.map((service) => service.revoke("cli", key.id)));
    expect(answers.every((answer) => answer?.key.revokedAt !== null)).toBe(true);
    // One of the two revoked it; the other answers the key as that one left it.
    expect(answers.filter((answer) => answer?.revoked).length).toBe(1);
    expect(answers[0]?.key.revokedAt).toBe(answers[1]!.key.revokedAt);
  }
  const today = new Date().toISOString().slice(0, 10);
  const entries = await first.listAudit(`${today}T00:00:00.000Z`, new Date(Date.now() + 86_400_000).toISOString(), 10_000);
  const events = await first.webhooks.claimDeliveries({ limit: 1000, nowMs: Date.now(), leaseMs: 60_000 });
  for (const id of ids) {
    expect({ id, entries: entries.filter((entry) => entry.action === "key.revoked" && entry.target === id).length }).toEqual({ id, entries: 1 });
    expect({ id, events: events.filter((delivery) => (JSON.parse(delivery.body) as { data: { key: { id: string } } }).data.key.id === id).length }).toEqual({ id, events: 1 });
  }
  await Promise.all([first.close(), second.close()]);
}

describe("a key revoked by two servers at once", () => {
  test("on SQLite (two connections to one file): one event, one audit entry", async () => {
    const dir = mkdtempSync(join(tmpdir(), "iplookup-revoke-race-"));
    try {
      await revokedOnce(async () => SqliteStore.open(join(dir, "state.db")));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test.skipIf(!postgresAvailable)("on PostgreSQL (two stores, as two hosts): one event, one audit entry", async () => {
    const url = await states.fresh();
    await revokedOnce(() => PostgresStore.open(url));
  });
});

/** The admin token of the server that revokes first, as its audit entries name it. */
const RACER = "adm_racerracerracer0";

/** A store kind, with the class whose revocations the race puts in order. */
interface Kind {
  readonly name: string;
  readonly fresh: () => Promise<string>;
  readonly open: (location: string) => Promise<Store>;
  readonly prototype: Pick<Store, "revokeKey" | "revokeAdminToken">;
}

/**
 * Runs `work` with every revocation of `method` made by a store other than `racer`'s
 * preceded by `revokeFirst` of the same id: the order two revokes at once take when both
 * found the key (or token) active before either revoked it. Resolves to what `work` did
 * and how many revocations came first.
 */
async function revokedMeanwhile<T>(kind: Kind, method: "revokeKey" | "revokeAdminToken", racer: Store, revokeFirst: (id: string) => Promise<unknown>, work: () => Promise<T>) {
  const original = kind.prototype[method] as (this: Store, ...args: unknown[]) => Promise<unknown>;
  let first = 0;
  const spy = spyOn(kind.prototype, method).mockImplementation(async function (this: Store, ...args: unknown[]) {
    if (this !== racer) {
      first++;
      await revokeFirst(args[0] as string);
    }
    return original.apply(this, args);
  } as never);
  try {
    return { outcome: await work(), first };
  } finally {
    spy.mockRestore();
  }
}

async function revocations(store: Store, action: string, target: string): Promise<AuditEntry[]> {
  const entries = await store.listAudit("2000-01-01T00:00:00.000Z", new Date(Date.now() + 86_400_000).toISOString(), 10_000);
  return entries.filter((entry) => entry.action === action && entry.target === target);
}

/**
 * CONTRACT §6, §8: revoking a key, or an admin token, that is revoked already exits 1
 * with a message, and so does a revoke that lost the race to another made after its own
 * check (it used to print "Revoked key …" and exit 0, though it revoked nothing). The
 * admin API answers the loser the key as it is, with the winner's revoked_at (§10's
 * "revoking a revoked key changes nothing and answers it as it is"), and claims no
 * second revocation.
 */
function theRevokeThatCameSecond(kind: Kind): void {
  const racing = async () => {
    const location = await kind.fresh();
    const racer = await kind.open(location);
    return { location, racer, audit: new AuditLog(racer) };
  };

  test(`${kind.name}: keys revoke exits 1, saying the key was revoked already`, async () => {
    const { location, racer, audit } = await racing();
    const keys = new KeyService(racer, audit, { now: () => new Date() });
    const { key } = await keys.create(CLI_ACTOR, "raced", "free");
    const { outcome, first } = await revokedMeanwhile(kind, "revokeKey", racer, (id) => keys.revoke(RACER, id), () =>
      runCliInProcess("", ["keys", "revoke", key.id], { IPLOOKUP_STATE: location }),
    );
    expect(first).toBe(1);
    const revokedAt = (await racer.getKey(key.id))!.revokedAt;
    expect(outcome).toEqual({ code: 1, stdout: "", stderr: `iplookup: key ${key.id} (raced) was revoked on ${revokedAt} already\n` });
    expect((await revocations(racer, "key.revoked", key.id)).map((entry) => entry.actor)).toEqual([RACER]);
    await racer.close();
  });

  test(`${kind.name}: admin revoke exits 1, saying the token was revoked already`, async () => {
    const { location, racer, audit } = await racing();
    const { token } = await createAdminTokenAudited(racer, audit, CLI_ACTOR, "raced", false);
    const { outcome, first } = await revokedMeanwhile(kind, "revokeAdminToken", racer, (id) => revokeAdminTokenAudited(racer, audit, RACER, id), () =>
      runCliInProcess("", ["admin", "revoke", token.id], { IPLOOKUP_STATE: location }),
    );
    expect(first).toBe(1);
    const revokedAt = (await racer.getAdminToken(token.id))!.revokedAt;
    expect(outcome).toEqual({ code: 1, stdout: "", stderr: `iplookup: admin token ${token.id} (raced) was revoked on ${revokedAt} already\n` });
    expect((await revocations(racer, "admin_token.revoked", token.id)).map((entry) => entry.actor)).toEqual([RACER]);
    await racer.close();
  });

  test(`${kind.name}: POST /admin/v1/keys/{id}/revoke answers the key as the other revocation left it`, async () => {
    const { location, racer, audit } = await racing();
    const keys = new KeyService(racer, audit, { now: () => new Date() });
    const { key } = await keys.create(CLI_ACTOR, "raced", "free");
    const { secret } = await racer.createAdminToken("ops");
    const store = await kind.open(location);
    const app = createAdminApp({ store, now: () => new Date(), version: "t", workers: 1, uptimeSeconds: () => 1, dataInfo: () => defaultIndex().info });
    const { outcome, first } = await revokedMeanwhile(kind, "revokeKey", racer, (id) => keys.revoke(RACER, id), async () => {
      const response = await app.handle(new Request(`http://admin/admin/v1/keys/${key.id}/revoke`, { method: "POST", headers: { authorization: `Bearer ${secret}` } }));
      return { status: response.status, body: (await response.json()) as { id: string; revoked_at: string | null } };
    });
    expect(first).toBe(1);
    const revokedAt = (await racer.getKey(key.id))!.revokedAt;
    expect(outcome).toMatchObject({ status: 200, body: { id: key.id, revoked_at: revokedAt } });
    expect((await revocations(racer, "key.revoked", key.id)).map((entry) => entry.actor)).toEqual([RACER]);
    await Promise.all([store.close(), racer.close()]);
  });
}

describe("the revoke that came second", () => {
  const dir = mkdtempSync(join(tmpdir(), "iplookup-revoke-second-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  let files = 0;
  theRevokeThatCameSecond({
    name: "SQLite",
    fresh: async () => join(dir, `state-${++files}.db`),
    open: async (location) => SqliteStore.open(location),
    prototype: SqliteStore.prototype,
  });
  describe.skipIf(!postgresAvailable)("", () =>
    theRevokeThatCameSecond({ name: "PostgreSQL", fresh: () => states.fresh(), open: (location) => PostgresStore.open(location), prototype: PostgresStore.prototype }),
  );
});

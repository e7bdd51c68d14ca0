import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KeyService } from "../../src/access/key-service.ts";
import { AuditLog } from "../../src/audit/audit-log.ts";
import { PostgresStore } from "../../src/store/postgres-store.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import type { Store } from "../../src/store/store.ts";
import { postgresAvailable, testStates } from "../support/postgres.ts";

/**
 * A key revoked by two servers at once (two admin APIs, or the console and the CLI) is
 * revoked once: one key.revoked event and one audit entry (CONTRACT §16), however the
 * two interleave. Each server decides whether it revoked the key inside the transaction
 * that revokes it.
 */

const ROUNDS = 12;

async function revokedOnce(open: () => Promise<Store>): Promise<void> {
  const [first, second] = [await open(), await open()];
  await first.webhooks.createWebhook("http://127.0.0.1:9/x", ["key.revoked"]);
  const services = [first, second].map((store) => new KeyService(store, new AuditLog(store), { now: () => new Date() }));
  const ids: string[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const { key } = await services[0]!.create("cli", `k${round}`, "free");
    ids.push(key.id);
    const answers = await Promise.all(services.map((service) => service.revoke("cli", key.id)));
    expect(answers.every((answer) => answer?.revokedAt !== null)).toBe(true);
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

  const states = testStates();
  test.skipIf(!postgresAvailable)("on PostgreSQL (two stores, as two hosts): one event, one audit entry", async () => {
    const url = await states.fresh();
    await revokedOnce(() => PostgresStore.open(url));
  });
});

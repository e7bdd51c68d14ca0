/**
 * The key.expiring sweep of `serve` (src/serve/events.ts) on a PostgreSQL database that
 * takes no writes (a standby, default_transaction_read_only): the keys are read and no
 * key is expiring, so the step that fails is the outbox's prune, and the log line says
 * so rather than blaming the keys. Skipped when PostgreSQL cannot be reached.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { createLogger } from "../../src/log/logger.ts";
import { startServeEvents } from "../../src/serve/events.ts";
import { PostgresStore } from "../../src/store/postgres-store.ts";
import { POSTGRES_ADMIN_URL, postgresAvailable, testStates } from "../support/postgres.ts";

const states = testStates();
let admin: SQL | undefined;
afterAll(() => admin?.close());

describe.skipIf(!postgresAvailable)("the key.expiring sweep", () => {
  test("on a read-only database, its log line names the step that failed: the outbox's prune, not the keys", async () => {
    const url = await states.freshDatabase();
    const store = await PostgresStore.open(url);
    await store.createKey("not expiring", "free");
    await store.close();
    admin = new SQL(POSTGRES_ADMIN_URL, { max: 1 });
    // The store is closed: every session opened from now on is read-only.
    await admin.unsafe(`ALTER DATABASE ${new URL(url).pathname.slice(1)} SET default_transaction_read_only = on`);
    const lines: string[] = [];
    const events = await startServeEvents({ statePath: url, logger: createLogger("warn", (line) => lines.push(line)), now: () => new Date() });
    try {
      const swept = () => lines.filter((line) => line.includes("trying again later"));
      for (let i = 0; i < 200 && swept().length === 0; i++) await Bun.sleep(25);
      expect(swept()).toHaveLength(1);
      expect(swept()[0]).toContain("the webhook outbox could not be pruned of its old deliveries");
      expect(lines.filter((line) => line.includes("the keys could not be read"))).toEqual([]);
    } finally {
      await events.stop();
    }
  }, 30_000);
});

import { describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { downgradePostgres } from "./downgrade.ts";
import { PostgresStore } from "../../src/store/postgres-store.ts";
import { postgresAvailable, testStates } from "../support/postgres.ts";
import { correctionsStoreSuite } from "./corrections-suite.ts";

const states = testStates();

describe.skipIf(!postgresAvailable)("corrections on PostgreSQL", () => {
  correctionsStoreSuite({ fresh: states.fresh, open: (url, options) => PostgresStore.open(url, options) });

  test("a database of schema version 3 gains the corrections table, keeping its keys", async () => {
    const url = await states.fresh();
    const store = await PostgresStore.open(url);
    const { key } = await store.createKey("old", "free");
    await store.close();
    const sql = new SQL(url, { max: 1 });
    await downgradePostgres(sql, 3);
    await sql.close();
    const reopened = await PostgresStore.open(url);
    expect((await reopened.getKey(key.id))?.name).toBe("old");
    const generation = await reopened.generation();
    await reopened.putCorrection("192.0.2.0/24", { asn: 1 }, null);
    expect(await reopened.generation()).toBe(generation + 1);
    await reopened.close();
  });
});

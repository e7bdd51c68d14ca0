import { describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { downgradePostgres } from "./downgrade.ts";
import { PostgresStore } from "../../src/store/postgres-store.ts";
import { postgresAvailable, testStates } from "../support/postgres.ts";
import { correctionsStoreSuite } from "./corrections-suite.ts";

const states = testStates();

describe.skipIf(!postgresAvailable)("corrections on PostgreSQL", () => {
  correctionsStoreSuite({ fresh: states.fresh, open: (url, options) => PostgresStore.open(url, options) });

  test("a block's first correction written while another writer inserts it is recorded as replacing that one, not as a second creation", async () => {
    const url = await states.fresh();
    const store = await PostgresStore.open(url);
    const other = new SQL(url, { max: 1 });
    let seenBefore: unknown = "not called";
    let put: Promise<unknown> | undefined;
    await other.begin(async (tx) => {
      await tx`INSERT INTO corrections (cidr, fields, note, created_at, updated_at) VALUES ('192.0.2.0/24', '{"asn":1}', NULL, now(), now())`;
      // The store's write meets the uncommitted row and waits for it to commit.
      put = store.putCorrection("192.0.2.0/24", { asn: 2 }, null, (_after, before) => {
        seenBefore = before;
        return null;
      });
      await Bun.sleep(200);
      expect(seenBefore).toBe("not called");
    });
    await put;
    expect(seenBefore).toMatchObject({ cidr: "192.0.2.0/24", fields: { asn: 1 } });
    expect((await store.listCorrections()).map((correction) => correction.fields)).toEqual([{ asn: 2 }]);
    await other.close();
    await store.close();
  });

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
    const generation = (await reopened.generation()).count;
    await reopened.putCorrection("192.0.2.0/24", { asn: 1 }, null);
    expect((await reopened.generation()).count).toBe(generation + 1);
    await reopened.close();
  });
});

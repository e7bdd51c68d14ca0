import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { downgradeSqlite } from "./downgrade.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { StoreUnavailableError } from "../../src/store/store.ts";
import { correctionsStoreSuite } from "./corrections-suite.ts";
import { tempStatePaths } from "./temp-state.ts";

const freshPath = tempStatePaths();

describe("corrections on SQLite", () => {
  correctionsStoreSuite({ fresh: async () => freshPath(), open: async (path, options) => SqliteStore.open(path, options) });

  test("a state file of schema version 2 gains the corrections table, keeping its keys", async () => {
    const path = freshPath();
    const store = SqliteStore.open(path);
    const { key } = await store.createKey("old", "free");
    await store.close();
    const db = new Database(path);
    downgradeSqlite(db, 2);
    db.close();
    const reopened = SqliteStore.open(path);
    expect((await reopened.getKey(key.id))?.name).toBe("old");
    const generation = (await reopened.generation()).count;
    await reopened.putCorrection("192.0.2.0/24", { asn: 1 }, null);
    expect((await reopened.generation()).count).toBe(generation + 1);
    await reopened.close();
  });

  test("a write on a state file another process holds locked is StoreUnavailableError, and changes nothing", async () => {
    const path = freshPath();
    const store = SqliteStore.open(path, { busyTimeoutMs: 50 });
    await store.putCorrection("192.0.2.0/24", { asn: 1 }, null);
    const holder = new Database(path);
    holder.run("BEGIN IMMEDIATE");
    try {
      await expect(store.putCorrection("192.0.2.0/24", { asn: 2 }, null)).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(store.removeCorrection("192.0.2.0/24")).rejects.toBeInstanceOf(StoreUnavailableError);
    } finally {
      holder.run("ROLLBACK");
      holder.close();
    }
    expect((await store.listCorrections()).map((c) => c.fields)).toEqual([{ asn: 1 }]);
    await store.close();
  });
});

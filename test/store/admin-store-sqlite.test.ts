import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { downgradeSqlite } from "./downgrade.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { SCHEMA_VERSION } from "../../src/store/schema.ts";
import { adminStoreSuite } from "./admin-store-suite.ts";
import { tempStatePaths } from "./temp-state.ts";

const freshPath = tempStatePaths();

describe("admin tokens and daily use on SQLite", () => {
  adminStoreSuite({ fresh: async () => freshPath(), open: async (path, options) => SqliteStore.open(path, options) });

  test("a state file of schema version 1 gains the new tables, keeping its keys and units", async () => {
    const path = freshPath();
    const store = SqliteStore.open(path);
    const { key } = await store.createKey("old", "free");
    await store.charge({ keyId: key.id, period: "2026-11", units: 5, limit: null });
    await store.close();
    // Back to version 1, as an iplookup before the admin API left it (and before the key controls).
    const db = new Database(path);
    downgradeSqlite(db, 1);
    db.close();
    const reopened = SqliteStore.open(path);
    expect(await reopened.unitsUsed(key.id, "2026-11")).toBe(5);
    expect(await reopened.listAdminTokens()).toEqual([]);
    expect(await reopened.usageByDay("2026-01-01", "2026-12-31")).toEqual([]);
    await reopened.close();
    const check = new Database(path, { readonly: true });
    expect((check.query("PRAGMA user_version").get() as { user_version: number }).user_version).toBe(SCHEMA_VERSION);
    check.close();
  });
});

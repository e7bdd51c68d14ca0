import { describe } from "bun:test";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { auditedChangesSuite } from "./audited-changes-suite.ts";
import { sqliteRawChanges } from "./raw-changes.ts";
import { tempStatePaths } from "./temp-state.ts";

const freshPath = tempStatePaths();

describe("audited changes on SQLite", () => {
  auditedChangesSuite({
    fresh: async () => freshPath(),
    open: async (path, options) => SqliteStore.open(path, options),
    refuseInserts: sqliteRawChanges.refuseInserts,
  });
});

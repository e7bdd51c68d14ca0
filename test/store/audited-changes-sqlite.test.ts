import { describe } from "bun:test";
import { Database } from "bun:sqlite";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { auditedChangesSuite } from "./audited-changes-suite.ts";
import { tempStatePaths } from "./temp-state.ts";

const freshPath = tempStatePaths();

describe("audited changes on SQLite", () => {
  auditedChangesSuite({
    fresh: async () => freshPath(),
    open: async (path, options) => SqliteStore.open(path, options),
    async refuseInserts(path, table) {
      const db = new Database(path);
      db.run(`CREATE TRIGGER refuse_${table} BEFORE INSERT ON ${table} BEGIN SELECT RAISE(ABORT, '${table} refused'); END`);
      db.close();
    },
  });
});

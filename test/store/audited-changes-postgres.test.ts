import { describe } from "bun:test";
import { SQL } from "bun";
import { PostgresStore } from "../../src/store/postgres-store.ts";
import { postgresAvailable, testStates } from "../support/postgres.ts";
import { auditedChangesSuite } from "./audited-changes-suite.ts";

const states = testStates();

describe.skipIf(!postgresAvailable)("audited changes on PostgreSQL", () => {
  auditedChangesSuite({
    fresh: states.fresh,
    open: (url, options) => PostgresStore.open(url, options),
    async refuseInserts(url, table) {
      const sql = new SQL(url, { max: 1 });
      await sql.unsafe(`CREATE FUNCTION refuse_${table}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION '${table} refused'; END $$`);
      await sql.unsafe(`CREATE TRIGGER refuse_${table} BEFORE INSERT ON ${table} FOR EACH ROW EXECUTE FUNCTION refuse_${table}()`);
      await sql.close();
    },
  });
});

import { describe } from "bun:test";
import { PostgresStore } from "../../src/store/postgres-store.ts";
import { postgresAvailable, testStates } from "../support/postgres.ts";
import { auditedChangesSuite } from "./audited-changes-suite.ts";
import { postgresRawChanges } from "./raw-changes.ts";

const states = testStates();

describe.skipIf(!postgresAvailable)("audited changes on PostgreSQL", () => {
  auditedChangesSuite({
    fresh: states.fresh,
    open: (url, options) => PostgresStore.open(url, options),
    refuseInserts: postgresRawChanges.refuseInserts,
  });
});

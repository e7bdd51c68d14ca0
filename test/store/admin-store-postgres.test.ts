import { describe } from "bun:test";
import { PostgresStore } from "../../src/store/postgres-store.ts";
import { postgresAvailable, testStates } from "../support/postgres.ts";
import { adminStoreSuite } from "./admin-store-suite.ts";

const states = testStates();

describe.skipIf(!postgresAvailable)("admin tokens and daily use on PostgreSQL", () => {
  adminStoreSuite({ fresh: states.fresh, open: (url, options) => PostgresStore.open(url, options) });
});

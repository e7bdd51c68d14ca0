import { describe } from "bun:test";
import { PostgresStore } from "../../src/store/postgres-store.ts";
import { postgresAvailable, testStates } from "../support/postgres.ts";
import { keyControlsStoreSuite } from "./key-controls-store-suite.ts";

const states = testStates();

describe.skipIf(!postgresAvailable)("key controls, grace, read-only tokens and the audit log on PostgreSQL", () => {
  keyControlsStoreSuite({ fresh: states.fresh, open: (url, options) => PostgresStore.open(url, options) });
});

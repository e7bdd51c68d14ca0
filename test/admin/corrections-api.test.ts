import { afterAll, describe } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { postgresAvailable, testStates } from "../support/postgres.ts";
import { correctionsApiSuite } from "./corrections-api-suite.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-corrections-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

describe("corrections through the admin API on a SQLite state file", () => {
  correctionsApiSuite(async () => join(dir, `state-${++files}.db`));
});

const states = testStates();
describe.skipIf(!postgresAvailable)("corrections through the admin API on PostgreSQL", () => {
  correctionsApiSuite(states.fresh);
});

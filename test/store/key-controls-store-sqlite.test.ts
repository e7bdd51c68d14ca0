import { describe } from "bun:test";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { keyControlsStoreSuite } from "./key-controls-store-suite.ts";
import { tempStatePaths } from "./temp-state.ts";

const freshPath = tempStatePaths();

describe("key controls, grace, read-only tokens and the audit log on SQLite", () => {
  keyControlsStoreSuite({ fresh: async () => freshPath(), open: async (path, options) => SqliteStore.open(path, options) });
});

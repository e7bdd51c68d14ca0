import { existsSync } from "node:fs";
import { defaultDataPath } from "../../src/config/paths.ts";
import { RangeIndex } from "../../src/index/range-index.ts";

let shared: RangeIndex | undefined;

/**
 * The real default data set, as `bun run data:default` builds it (the test script runs
 * that first). Loaded once per test file.
 */
export function defaultIndex(): RangeIndex {
  const path = defaultDataPath();
  if (!existsSync(path)) throw new Error(`${path} is missing: run 'bun run data:default' first`);
  return (shared ??= RangeIndex.open(path));
}

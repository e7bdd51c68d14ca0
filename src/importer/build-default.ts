/**
 * Builds the default data file from the pinned ip-location-db packages:
 *
 *   bun src/importer/build-default.ts [--out PATH] [--force]
 *
 * (`bun run data:default`). Skips the build when the file exists and was built from the
 * same package versions, unless --force.
 */
import { Database } from "bun:sqlite";
import { existsSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { parseArgs } from "node:util";
import { defaultDataPath } from "../config/paths.ts";
import { buildDataSet } from "./build.ts";
import { DATA_FORMAT, writeDataFile } from "./data-file.ts";
import { defaultSources } from "./default-dataset.ts";
import type { ImportLog } from "./build.ts";

/** Builds the default data file at `path` unless an up-to-date one is there. Returns whether it built. */
export async function buildDefaultDataFile(path: string, options: { force?: boolean; log?: ImportLog } = {}): Promise<boolean> {
  const log = options.log ?? (() => {});
  const sources = defaultSources();
  const version = sources.map((source) => `${source.package}@${source.version}`).join(" ");
  if (!options.force && existsSync(path) && builtVersion(path) === version) {
    log(`${path} is up to date (${version})`);
    return false;
  }
  const began = performance.now();
  mkdirSync(dirname(path), { recursive: true });
  writeDataFile(path, await buildDataSet(sources, new Date(), log));
  log(`wrote ${path} in ${((performance.now() - began) / 1000).toFixed(1)} s`);
  return true;
}

function builtVersion(path: string): string | null {
  try {
    const db = new Database(path, { readonly: true });
    try {
      const rows = db.query<{ key: string; value: string }, []>("SELECT key, value FROM meta").all();
      const meta = new Map(rows.map((row) => [row.key, row.value]));
      return meta.get("format") === DATA_FORMAT ? (meta.get("version") ?? null) : null;
    } finally {
      db.close();
    }
  } catch {
    return null;
  }
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { out: { type: "string" }, force: { type: "boolean" } } });
  await buildDefaultDataFile(values.out ?? defaultDataPath(), { force: values.force, log: (line) => console.log(line) });
}

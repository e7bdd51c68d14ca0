/**
 * Builds the default data file from the pinned ip-location-db packages and the hosting
 * list (data/hosting-asns.csv):
 *
 *   bun src/importer/build-default.ts [--out PATH] [--force]
 *
 * (`bun run data:default`). Skips the build when the file exists, was built from the
 * same package versions and is newer than the code that builds it, unless --force.
 */
import { Database } from "bun:sqlite";
import { existsSync, mkdirSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { parseArgs } from "node:util";
import { defaultDataPath } from "../config/paths.ts";
import { buildDataSet } from "./build.ts";
import { checkDataFile } from "../data-file/checksums.ts";
import { DATA_FORMAT } from "../data-file/layout.ts";
import { writeDataFile } from "./data-file.ts";
import { defaultSources, defaultVersion } from "./default-dataset.ts";
import { readHostingList } from "./hosting-asns.ts";
import { lineProgress } from "./progress.ts";

/**
 * Builds the default data file at `path` unless an up-to-date one is there. Returns whether
 * it built. The one way the default data is made: `bun run data:default` and `bun run
 * release` (which forces a build stamped `builtAt`, the commit's time, so that the
 * release's bytes follow the commit).
 */
export async function buildDefaultDataFile(path: string, options: { force?: boolean; log?: (line: string) => void; builtAt?: Date } = {}): Promise<boolean> {
  const log = options.log ?? (() => {});
  const sources = defaultSources();
  const hostingList = readHostingList();
  const version = defaultVersion(sources, hostingList);
  const existing = options.force || !existsSync(path) ? null : builtMeta(path);
  if (existing?.builtBy === "import") {
    log(`${path} holds imported data (${existing.version}); left as it is (--force replaces it with the default data)`);
    return false;
  }
  if (existing?.version === version) {
    const changed = changedSince(path);
    if (changed === null) {
      log(`${path} is up to date (${version})`);
      return false;
    }
    log(`${path} was built before ${changed} changed: building it again`);
  }
  const began = performance.now();
  mkdirSync(dirname(path), { recursive: true });
  writeDataFile(path, await buildDataSet(sources, options.builtAt ?? new Date(), lineProgress(log), { builtBy: "default", hostingList }));
  log(`wrote ${path} in ${((performance.now() - began) / 1000).toFixed(1)} s`);
  return true;
}

/**
 * The code that decides what a data file holds: importing, the file's layout, and the
 * records and address helpers the importer builds them with.
 */
const BUILDING_CODE = ["importer", "data-file", "index", "address"].map((folder) => join(import.meta.dir, "..", folder));

/**
 * A source file of the code that builds the data modified after the data file at `path`
 * (in a checkout, after a pull that changed how data is imported), or null. The same
 * package versions are not the same data when the importer's rules have changed since.
 */
function changedSince(path: string): string | null {
  const builtAt = statSync(path).mtimeMs;
  for (const folder of BUILDING_CODE) {
    if (!existsSync(folder)) continue;
    for (const file of new Bun.Glob("**/*.ts").scanSync({ cwd: folder, absolute: true })) {
      if (statSync(file).mtimeMs > builtAt) return relative(join(import.meta.dir, "..", ".."), file);
    }
  }
  return null;
}

/**
 * The version and builder of a current-format data file, or null for anything else
 * (a damaged file too: it is built again).
 */
function builtMeta(path: string): { version: string; builtBy: string } | null {
  try {
    const db = new Database(path, { readonly: true });
    try {
      const rows = db.query<{ key: string; value: string }, []>("SELECT key, value FROM meta").all();
      const meta = new Map(rows.map((row) => [row.key, row.value]));
      if (meta.get("format") !== DATA_FORMAT) return null;
      const blobs = new Map(db.query<{ name: string; bytes: Uint8Array }, []>("SELECT name, bytes FROM blobs").all().map((row) => [row.name, row.bytes]));
      checkDataFile(db, meta, blobs);
      return { version: meta.get("version") ?? "", builtBy: meta.get("built_by") ?? "" };
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

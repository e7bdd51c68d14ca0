import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildDataSet } from "../../../src/importer/build.ts";
import { writeDataFile } from "../../../src/importer/data-file.ts";
import type { FeedOptions, SourceSpec } from "../../../src/importer/source.ts";
import { RangeIndex } from "../../../src/index/range-index.ts";
import { LookupService } from "../../../src/lookup/lookup-service.ts";
import type { LookupResult } from "../../../src/lookup/lookup-result.ts";

/** A folder for one test file's fixtures. */
export function fixtureDir(name: string): string {
  return mkdtempSync(join(tmpdir(), `iplookup-feeds-${name}-`));
}

/** Writes a fixture file and returns its path. */
export function fixture(dir: string, name: string, content: string | Uint8Array): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

/** A source of one file, with --signal / --service when given. */
export function source(path: string, feed?: FeedOptions): SourceSpec {
  return { files: [{ path }], ...(feed !== undefined ? { feed } : {}) };
}

let built = 0;

/** Builds a data file from the sources, as `data import` does, and answers lookups from it. */
export async function dataSet(dir: string, sources: readonly SourceSpec[]) {
  const path = join(dir, `data-${++built}.db`);
  writeDataFile(path, await buildDataSet(sources, new Date("2026-11-25T00:00:00Z")));
  const index = RangeIndex.open(path);
  const service = new LookupService(() => index);
  const look = (ip: string): LookupResult => service.lookup(service.resolve([ip]))[0] as LookupResult;
  return { path, index, look, service };
}

/** Privacy with the given members set, every other one null (the rule's starting point). */
export function privacy(members: Partial<Record<"hosting" | "tor" | "vpn" | "relay" | "proxy", boolean>>, service: string | null = null) {
  return { hosting: null, tor: null, vpn: null, relay: null, proxy: null, ...members, service };
}

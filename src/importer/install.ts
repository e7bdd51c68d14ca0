import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { ConfigError } from "../config/config-error.ts";
import { RECIPE_VERSION, type Recipe, type RecipeSource } from "../data-file/recipe.ts";
import type { DataSetInfo } from "../index/network-record.ts";
import { RangeIndex } from "../index/range-index.ts";
import { buildDataSet } from "./build.ts";
import { installWritten, writeBeside } from "./data-file.ts";
import { acquireSources, type AcquireContext } from "./fetch/acquire.ts";
import { ExpansionBudget } from "./fetch/expansion.ts";
import { DownloadAuth } from "./fetch/locations.ts";
import type { Progress } from "./progress.ts";
import type { SourceSpec } from "./source.ts";
import { resolvedDataPath, takeUpdateLock } from "./update-lock.ts";

/** What importing or updating a data file runs with. */
export interface InstallOptions {
  readonly now: Date;
  readonly progress: Progress;
  /** The environment: IPLOOKUP_DOWNLOAD_AUTH. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** An iplookup data file put after the sources (`--with-default`: the default data set). */
  readonly base?: string;
  /** The downloads' clocks (`--download-timeout`: timeoutMs). */
  readonly timeouts?: AcquireContext["timeouts"];
  /** `--max-expanded`: what the sources may unpack to, together (DEFAULT_MAX_EXPANDED). */
  readonly maxExpanded?: number;
  /** `--require-checksum`. */
  readonly requireChecksum?: boolean;
}

/**
 * `data import`: fetches the sources (downloads, unpacking), builds the data set and
 * installs it at `path` (see buildAndInstall), recording how it was built. Downloads and
 * unpacked files go to a folder beside `path`, removed afterwards whatever happens.
 */
export async function importDataSet(given: string, sources: readonly SourceSpec[], options: InstallOptions): Promise<DataSetInfo> {
  const path = resolvedDataPath(given);
  return withWorkDir(path, options, async (context) => {
    const { specs, recipe } = await acquireSources(sources, context);
    return buildAndInstall(path, specs, recipe, options);
  });
}

/**
 * Runs `work` with a fetching context whose folder lies beside `path` (same file system:
 * downloads never land in a small /tmp, and nothing of them stays).
 */
export async function withWorkDir<T>(path: string, options: InstallOptions, work: (context: AcquireContext) => Promise<T>): Promise<T> {
  const auth = downloadAuth(options.env);
  mkdirSync(dirname(path), { recursive: true });
  // One import or update of a file at a time; a second says so (UpdateBusyError).
  const lock = takeUpdateLock(path);
  let workDir: string;
  try {
    removeLeftovers(path);
    workDir = mkdtempSync(join(dirname(path), `.${basename(path)}.sources-`));
  } catch (error) {
    lock.release();
    throw error;
  }
  try {
    return await work({
      workDir,
      auth,
      now: options.now,
      progress: options.progress,
      timeouts: options.timeouts,
      budget: new ExpansionBudget(options.maxExpanded),
      requireChecksum: options.requireChecksum,
    });
  } finally {
    rmSync(workDir, { recursive: true, force: true });
    lock.release();
  }
}

/** No import or update runs this long (a download ends within --download-timeout). */
const LEFTOVER_AFTER_MS = 24 * 3_600_000;

/**
 * What an import or update killed on its way left beside `path` (a server stopping
 * ends the update it started): its folder of downloads, and its data file written
 * under a temporary name (importer/data-file.ts), once a day old.
 */
function removeLeftovers(path: string): void {
  const name = basename(path);
  const pattern = new RegExp(`^(\\.${escapeRegExp(name)}\\.sources-.+|${escapeRegExp(name)}\\.\\d+\\.tmp)$`);
  for (const entry of readdirSync(dirname(path))) {
    if (!pattern.test(entry)) continue;
    const leftover = join(dirname(path), entry);
    try {
      if (Date.now() - statSync(leftover).mtimeMs > LEFTOVER_AFTER_MS) rmSync(leftover, { recursive: true, force: true });
    } catch {
      // gone meanwhile
    }
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** IPLOOKUP_DOWNLOAD_AUTH, read; a malformed value is a configuration error (exit 2). */
export function downloadAuth(env: Readonly<Record<string, string | undefined>>): DownloadAuth {
  try {
    return DownloadAuth.parse(env.IPLOOKUP_DOWNLOAD_AUTH);
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
}

/**
 * Builds the data set from sources on disk and installs it at `path` as every import
 * does: written beside it under a temporary name, loaded once to check it, renamed into
 * place (a server watching the file swaps it in; a reader sees the old file or the new
 * one). The recipe is stored with it.
 */
export async function buildAndInstall(path: string, specs: readonly SourceSpec[], recipeSources: readonly RecipeSource[], options: InstallOptions): Promise<DataSetInfo> {
  const { temporary, writeBegan } = await buildBeside(path, specs, recipeSources, options);
  // The built contents went with buildBeside's frame; collected now, the check's load of
  // the written file does not come on top of them (city data: 1,311 → 1,150 MiB at the peak).
  Bun.gc(true);
  let info: DataSetInfo | undefined;
  installWritten(temporary, path, (written) => {
    info = RangeIndex.open(written).info;
  });
  if (!info) throw new Error("the written data file was not checked");
  options.progress.line(`wrote and checked ${path} (${((performance.now() - writeBegan) / 1000).toFixed(1)} s)`);
  return info;
}

/** The data set built and written beside `path`; nothing of it is held once this returns. */
async function buildBeside(path: string, specs: readonly SourceSpec[], recipeSources: readonly RecipeSource[], options: InstallOptions) {
  const contents = await buildDataSet(specs, options.now, options.progress, { base: options.base });
  const recipe: Recipe = {
    version: RECIPE_VERSION,
    base: options.base === undefined ? null : { dataVersion: RangeIndex.open(options.base).info.dataVersion },
    sources: recipeSources,
  };
  const writeBegan = performance.now();
  const { temporary } = writeBeside(path, { ...contents, recipe }, { collectGarbage: true });
  return { temporary, writeBegan };
}

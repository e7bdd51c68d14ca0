import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmdirSync, rmSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { ConfigError } from "../config/config-error.ts";
import { osReason } from "../errors/file-access.ts";
import { RECIPE_VERSION, type Recipe, type RecipeSource } from "../data-file/recipe.ts";
import type { DataSetInfo } from "../index/network-record.ts";
import { RangeIndex } from "../index/range-index.ts";
import { buildDataSet } from "./build.ts";
import { installWritten, removeTemporary, temporaryBeside, writeBeside } from "./data-file.ts";
import { acquireSources, type AcquireContext } from "./fetch/acquire.ts";
import { ExpansionBudget } from "./fetch/expansion.ts";
import { DownloadAuth } from "./fetch/locations.ts";
import { checkInstallTarget } from "./install-target.ts";
import type { Progress } from "./progress.ts";
import type { SourceSpec } from "./source.ts";
import { resolvedDataPath, takeUpdateLock, type UpdateLock } from "./update-lock.ts";

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
  /** Called just before the new file is renamed into place: from then on the import's result stands (see cli/stop-signals.ts). */
  readonly committed?: () => void;
}

/**
 * `data import`: fetches the sources (downloads, unpacking), builds the data set and
 * installs it at `path` (see buildAndInstall), recording how it was built. Downloads and
 * unpacked files go to a folder beside `path`, removed afterwards whatever happens.
 * What is at `path` is looked at first: only a data file is replaced (checkInstallTarget).
 */
export async function importDataSet(given: string, sources: readonly SourceSpec[], options: InstallOptions): Promise<DataSetInfo> {
  const path = resolvedDataPath(given);
  checkInstallTarget(path, [...sources.flatMap((source) => source.files.map((file) => file.path)), ...(options.base === undefined ? [] : [options.base])]);
  return withWorkDir(path, options, async (context) => {
    const { specs, recipe } = await acquireSources(sources, context);
    return buildAndInstall(path, specs, recipe, options);
  });
}

/**
 * What the imports and updates under way in this process would leave beside their data
 * files if it ended now, each with the way to remove it.
 */
const unfinished = new Set<() => void>();

/**
 * Removes what the imports and updates under way in this process have made beside their
 * data files (the downloads' folder, the data file written under its temporary name) and
 * lets go of their locks, leaving the installed files as they are: for a process a
 * signal ends (cli/stop-signals.ts), whose `finally` blocks never run. Synchronous, as a
 * signal's handler must be.
 */
export function abandonUnfinished(): void {
  for (const cleanUp of unfinished) cleanUp();
  unfinished.clear();
}

/**
 * Runs `work` with a fetching context whose folder lies beside `path` (same file system:
 * downloads never land in a small /tmp, and nothing of them stays). The data file's
 * folder is made if missing, and removed again (with the folders made above it) when
 * the run ends with nothing installed in it.
 */
export async function withWorkDir<T>(path: string, options: InstallOptions, work: (context: AcquireContext) => Promise<T>): Promise<T> {
  const auth = downloadAuth(options.env);
  const made = makeFolder(path);
  let lock: UpdateLock;
  try {
    // One import or update of a file at a time; a second says so (UpdateBusyError).
    lock = takeUpdateLock(path);
  } catch (error) {
    removeMadeFolders(path, made);
    throw error;
  }
  let workDir: string;
  try {
    removeLeftovers(path);
    workDir = mkdtempSync(join(dirname(path), `.${basename(path)}.sources-`));
  } catch (error) {
    lock.release();
    removeMadeFolders(path, made);
    throw new Error(`cannot write beside the data file ${path}: ${osReason(error)}`, { cause: error });
  }
  const cleanUp = () => {
    rmSync(workDir, { recursive: true, force: true });
    removeTemporary(temporaryBeside(path));
    lock.release();
    removeMadeFolders(path, made);
  };
  unfinished.add(cleanUp);
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
    unfinished.delete(cleanUp);
    rmSync(workDir, { recursive: true, force: true });
    lock.release();
    removeMadeFolders(path, made);
  }
}

/** Makes the data file's folder where it is missing: the first folder made, if any. */
function makeFolder(path: string): string | undefined {
  try {
    return mkdirSync(dirname(path), { recursive: true });
  } catch (error) {
    throw new Error(`cannot write the data file ${path}: its folder ${dirname(path)} cannot be made: ${osReason(error)}`, { cause: error });
  }
}

/**
 * Removes the folders makeFolder made for `path`, from the data file's up to `made`,
 * while nothing is installed at `path` and each is empty (another process may have put
 * something there meanwhile: then it stays).
 */
function removeMadeFolders(path: string, made: string | undefined): void {
  if (made === undefined || existsSync(path)) return;
  for (let folder = dirname(path); ; folder = dirname(folder)) {
    try {
      rmdirSync(folder);
    } catch {
      return;
    }
    if (folder === made || dirname(folder) === folder) return;
  }
}

/** No import or update runs this long (a download ends within --download-timeout). */
const LEFTOVER_AFTER_MS = 24 * 3_600_000;

/**
 * What an import or update that was killed (SIGKILL, out of memory: no chance to clean
 * up) left beside `path`, removed by the next one, which holds the update lock:
 *
 * - its folder of downloads (`.NAME.sources-XXXXXX`): such a folder is made only by a
 *   holder of the lock, and the lock is held by this process alone, so whoever made it
 *   has ended;
 * - its data file written under a temporary name (data-file.ts: `NAME.PID.tmp`, and the
 *   `-journal` SQLite keeps beside it), once no process has that PID. A live PID's file
 *   may be another writer's, which takes no lock (`bun run data:default`), or a dead
 *   run's whose PID was given again: that one goes once a day old.
 */
function removeLeftovers(path: string): void {
  const name = escapeRegExp(basename(path));
  // mkdtemp's six characters exactly: `.NAME.sources-b.sources-XXXXXX` is the live folder
  // of the data file NAME.sources-b beside it, and `.NAME.sources-b.update-lock` its lock.
  const folder = new RegExp(`^\\.${name}\\.sources-[A-Za-z0-9]{6}$`);
  const temporary = new RegExp(`^${name}\\.(\\d+)\\.tmp(?:-journal)?$`);
  for (const entry of readdirSync(dirname(path))) {
    const leftover = join(dirname(path), entry);
    const pid = temporary.exec(entry)?.[1];
    try {
      if (folder.test(entry)) rmSync(leftover, { recursive: true, force: true });
      else if (pid !== undefined && (!processRuns(Number(pid)) || Date.now() - statSync(leftover).mtimeMs > LEFTOVER_AFTER_MS)) rmSync(leftover, { recursive: true, force: true });
    } catch {
      // gone meanwhile
    }
  }
}

/** Whether a process with this PID runs (as any user). */
function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException)?.code === "EPERM";
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
  let info: DataSetInfo;
  try {
    info = RangeIndex.open(temporary).info;
    // Writing and checking run without a turn of the event loop, so a stop signal that
    // came meanwhile (cli/stop-signals.ts) is still waiting: given its turn here, before
    // the rename, it removes the written file and the installed one stays as it was.
    await new Promise((resolve) => setImmediate(resolve));
  } catch (error) {
    removeTemporary(temporary);
    throw error;
  }
  options.committed?.();
  installWritten(temporary, path);
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

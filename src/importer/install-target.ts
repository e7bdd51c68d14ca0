import { accessSync, constants, statSync, type Stats } from "node:fs";
import { basename, dirname } from "node:path";
import { ConfigError } from "../config/config-error.ts";
import { sqliteCompanion, sqliteTableNames } from "../data-file/sqlite-tables.ts";
import { osReason, systemErrorCode } from "../errors/file-access.ts";
import { detectFormat } from "./detect-format.ts";
import { isUrl } from "./fetch/locations.ts";
import { sampleOfFile } from "./fetch/unpack.ts";

/**
 * The tables of iplookup data files: each format so far has had `meta` and `blobs`
 * (iplookup-data-2 adds `sources`; iplookup-data-1 also had `sources` and `records`).
 */
const DATA_FILE_TABLES = { always: ["meta", "blobs"], ever: new Set(["meta", "sources", "blobs", "records"]) };

/**
 * Refuses (ConfigError: exit 2), before anything is downloaded, locked or built, to
 * install a data file at `path` over something that is not one: `data import --data`
 * given the state file's path would otherwise replace the state file (keys, plans,
 * usage) with a data file, and `--data` naming a source would replace that source.
 *
 * The rule: what is at `path` may be replaced when there is nothing, an empty file, or
 * a SQLite file whose schema declares the tables of an iplookup data file of some
 * format (meta and blobs, and no table no format had). The schema is read from the
 * file's own header and schema pages (sqliteTableNames), never the tables' contents,
 * so a data file damaged in its tables or cut short (what an operator imports over), or
 * of an older format, is still replaced; a SQLite file whose schema pages cannot be read
 * cannot be told from a state file, and is refused. Anything else (the state file,
 * another program's SQLite file, a CSV, an MMDB, a folder) is refused, naming the path
 * and what it is, and so is a file that is one of `sources` (paths as given; URLs are
 * skipped), whatever it holds. Then the folder must be one this user can write
 * (checkFolder: else, or when the file cannot be read, a plain Error, exit 1).
 */
export function checkInstallTarget(path: string, sources: readonly string[]): void {
  checkNotCompanion(path);
  let stats: Stats | null = null;
  let unusable: Error | null = null;
  try {
    stats = statSync(path);
  } catch (error) {
    const code = systemErrorCode(error);
    // ENOTDIR: a part of the path is a file, which checkFolder names.
    if (code !== "ENOENT" && code !== "ENOTDIR") unusable = new Error(`cannot write the data file ${path}: ${osReason(error)}`, { cause: error });
  }
  try {
    if (stats !== null) checkReplaceable(path, stats, sources);
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    unusable = error as Error;
  }
  // A file that cannot be looked at (EACCES) is most often in a folder this user cannot
  // use, which checkFolder names with what to do.
  checkFolder(path);
  if (unusable !== null) throw unusable;
}

/**
 * Refuses a path that names a SQLite file's companion (see sqliteCompanion), there or
 * not: a data file written there would replace a running server's -wal, taking its state
 * file from under it, or be taken by SQLite for that file's log when it opens it next.
 */
function checkNotCompanion(path: string): void {
  const companion = sqliteCompanion(path);
  if (companion !== null) throw new ConfigError(`${path} is the ${companion.kind} of the SQLite file ${companion.main}, not a data file: it is left as it is; --data names the data file an import writes`);
}

/** What to do about a folder this user cannot use. */
const USER_HINT = "run it as a user who may write there, or keep the data file in a folder this user may write (--data)";

/** The checks on what is at `path` (see checkInstallTarget). */
function checkReplaceable(path: string, stats: Stats, sources: readonly string[]): void {
  if (stats.isDirectory()) {
    throw new ConfigError(`${path} is a folder, not a data file: --data names the data file itself (e.g. ${path.replace(/\/+$/, "")}/iplookup-data.db)`);
  }
  if (!stats.isFile()) throw new ConfigError(`${path} is not a regular file, so not a data file: it is left as it is; --data names the data file an import writes`);
  for (const source of sources) {
    if (isUrl(source)) continue;
    let sourceStats: Stats;
    try {
      sourceStats = statSync(source);
    } catch {
      continue; // a missing source is the import's to report
    }
    if (sourceStats.dev === stats.dev && sourceStats.ino === stats.ino) {
      throw new ConfigError(`${path} is one of the sources the new data file is built from (${source}), so it cannot also be replaced by it; it is left as it is. Name another data file with --data`);
    }
  }
  if (stats.size === 0) return;
  const kind = notADataFile(path);
  if (kind !== null) throw new ConfigError(kind);
}

/**
 * The data file's folder, where an import writes the new file under a temporary name,
 * its lock and its downloads, and renames the new file over `path`; made (with the
 * folders above it) when missing. A part of the path that is a file is a bad --data
 * (ConfigError: exit 2). A folder this user cannot write, or one on a read-only file
 * system, is a plain Error (exit 1: the import cannot be done here), naming the data
 * file, the folder and what to do, before anything is made.
 */
function checkFolder(path: string): void {
  const folder = dirname(path);
  let existing = folder;
  for (;;) {
    let stats: Stats;
    try {
      stats = statSync(existing);
    } catch (error) {
      const code = systemErrorCode(error);
      if ((code === "ENOENT" || code === "ENOTDIR") && dirname(existing) !== existing) {
        existing = dirname(existing);
        continue;
      }
      throw new Error(`cannot write the data file ${path}: its folder ${existing}: ${osReason(error)}${code === "EACCES" ? ` (${USER_HINT})` : ""}`, { cause: error });
    }
    if (!stats.isDirectory()) throw new ConfigError(`cannot write the data file ${path}: ${existing} is a file, not a folder; --data names a data file in a folder`);
    break;
  }
  try {
    accessSync(existing, constants.W_OK | constants.X_OK);
  } catch (error) {
    const where = existing === folder ? `its folder ${folder}` : `its folder ${folder} does not exist, and ${existing}, where it would be made,`;
    const readOnly = systemErrorCode(error) === "EROFS";
    const what = readOnly ? "is on a read-only file system (EROFS)" : `is not writable: ${osReason(error)}`;
    const hint = readOnly ? "keep the data file on a writable file system (--data)" : USER_HINT;
    throw new Error(
      `cannot write the data file ${path}: ${where} ${what}. The new file is written beside it (with its lock, .${basename(path)}.update-lock) and renamed into place: ${hint}`,
      { cause: error },
    );
  }
}

/** Why the non-empty regular file at `path` is not an iplookup data file, or null when it is one (possibly damaged). */
function notADataFile(path: string): string | null {
  let tables: string[] | null;
  try {
    tables = sqliteTableNames(path);
  } catch (error) {
    if (systemErrorCode(error) !== null) throw new Error(`cannot write the data file ${path}: it cannot be read, to tell that it is one: ${osReason(error)} (${USER_HINT})`, { cause: error });
    return `${path} is a SQLite file whose tables cannot be read (${(error as Error)?.message ?? String(error)}), so it cannot be told to be an iplookup data file; it is left as it is. If it is a damaged data file, remove it, then import again`;
  }
  if (tables === null) {
    let format: string | undefined;
    try {
      format = detectFormat(sampleOfFile(path), path);
    } catch {
      format = undefined;
    }
    const looks = format === undefined ? "" : ` but by its contents a source to import (format ${format}: the sources come after the options)`;
    return `${path} is not an iplookup data file: it is not a SQLite file${looks}; it is left as it is. --data names the data file an import writes`;
  }
  if (DATA_FILE_TABLES.always.every((name) => tables.includes(name)) && tables.every((name) => DATA_FILE_TABLES.ever.has(name))) return null;
  if (tables.includes("keys") && tables.includes("plans")) {
    return `${path} is an iplookup state file (keys, plans and usage), not a data file; it is left as it is. --state names the state file; --data names the data file an import writes`;
  }
  const named = tables.length === 0 ? "none" : tables.slice(0, 8).join(", ") + (tables.length > 8 ? ", …" : "");
  return `${path} is a SQLite file but not an iplookup data file (its tables: ${named}); it is left as it is. --data names the data file an import writes`;
}


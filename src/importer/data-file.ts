import { Database } from "bun:sqlite";
import { chmodSync, chownSync, renameSync, rmSync, statSync, type Stats } from "node:fs";
import { checksumsOf, CHECKSUMS_KEY } from "../data-file/checksums.ts";
import { blobNames, DATA_FORMAT, dataVersionOf, HOSTING_ASNS_KEY, recordBlobs, SCHEMA, SEGMENT_BLOBS, TablesHash, u32Bytes } from "../data-file/layout.ts";
import { RECIPE_KEY, recipeText, type Recipe } from "../data-file/recipe.ts";
import type { NetworkRecord, SourceInfo } from "../index/network-record.ts";
import type { Privacy } from "../index/privacy.ts";
import type { RecordField } from "../index/record-fields.ts";
import { fileSizeLimit, fileSizeLimitText } from "../errors/disk-limits.ts";
import { osReason, systemErrorCode } from "../errors/file-access.ts";
import type { PackedSegments } from "./merge.ts";

/** What the importer puts in a data file (laid out as data-file/layout.ts says). */
export interface DataFileContents {
  readonly builtBy: "default" | "import";
  readonly version: string;
  readonly builtAt: string;
  readonly fields: readonly RecordField[];
  readonly sources: readonly SourceInfo[];
  /** Record i+1; each has every field in `fields` but `privacy`, which privacyOf(i) gives. */
  readonly records: readonly Omit<NetworkRecord, "privacy">[];
  readonly privacyOf: (index: number) => Privacy;
  readonly v4: PackedSegments;
  readonly v6: PackedSegments;
  /** How to build it again (`data update`); none for the default data. */
  readonly recipe?: Recipe;
  /** The hosting list the records' hosting signal was built with (AS number → provider), if any. */
  readonly hostingAsns?: ReadonlyMap<number, string>;
}

/**
 * Writes the data file beside `path` under a temporary name and renames it into place,
 * so a reader sees the old file or the new one, never a part; on failure the old file
 * is untouched and the temporary one removed. `check`, when given, is run on the
 * written file before it is renamed into place (e.g. loading it). Returns the data
 * version written.
 */
export function writeDataFile(path: string, contents: DataFileContents, check?: (written: string) => void): string {
  const { temporary, dataVersion } = writeBeside(path, contents);
  installWritten(temporary, path, check);
  return dataVersion;
}

/**
 * The first half of writeDataFile: the file written beside `path` under a temporary
 * name (removed if writing fails). Split off so an import can let go of the contents,
 * a gigabyte with city data, before the written file is loaded to check it.
 *
 * @param options.collectGarbage collect what encoding the records left before the blobs
 *   are written: with city data a few hundred MB (a map and a list of texts a field),
 *   which otherwise stays through the writing (the import's peak: 1,150 → 957 MiB).
 */
export function writeBeside(path: string, contents: DataFileContents, options: { collectGarbage?: boolean } = {}): { temporary: string; dataVersion: string } {
  const temporary = temporaryBeside(path);
  removeTemporary(temporary);
  try {
    const db = new Database(temporary, { create: true });
    try {
      return { temporary, dataVersion: db.transaction(() => fill(db, contents, options.collectGarbage === true))() };
    } finally {
      db.close();
    }
  } catch (error) {
    // SQLite's "database or disk is full" says neither which file nor where: this does.
    // Stopped by the file size limit, it says "disk I/O error" and truncates the file
    // as it rolls back: when a limit is set, the message names it.
    const limit = fileSizeLimit() === undefined ? "" : ` (${fileSizeLimitText()})`;
    removeTemporary(temporary);
    throw new Error(`cannot write the data file ${temporary}: ${(error as Error)?.message ?? String(error)}${limit}`, { cause: error });
  }
}

/**
 * The second half of writeDataFile: `check` run on the written file, which is then
 * renamed to `path` (or removed), with the permissions of the file it replaces.
 */
export function installWritten(temporary: string, path: string, check?: (written: string) => void): void {
  try {
    check?.(temporary);
    keepPermissions(temporary, path);
    try {
      renameSync(temporary, path);
    } catch (error) {
      // The system's words name the temporary file, which the operator never named.
      throw systemErrorCode(error) === null ? error : new Error(`cannot install the data file ${path}: ${osReason(error)}`, { cause: error });
    }
  } catch (error) {
    removeTemporary(temporary);
    throw error;
  }
}

/**
 * Gives the written file the mode of the file at `path` it is about to replace, and its
 * owner and group where this process may (as root; elsewhere EPERM, and they stay this
 * process's). The server reading the file may run as another user: an import by root,
 * or under umask 077, would otherwise install a file that server cannot open, and its
 * reload (or next start) fails with EACCES. Set before the rename, so the file at `path`
 * never has other permissions. A new file (nothing at `path`) keeps the mode SQLite
 * made it with (0644 less the umask).
 */
function keepPermissions(temporary: string, path: string): void {
  let replaced: Stats;
  try {
    replaced = statSync(path);
  } catch {
    return;
  }
  if (!replaced.isFile()) return;
  const written = statSync(temporary);
  if (written.uid !== replaced.uid || written.gid !== replaced.gid) {
    try {
      chownSync(temporary, replaced.uid, replaced.gid);
    } catch (error) {
      if ((error as NodeJS.ErrnoException)?.code !== "EPERM") throw error;
    }
  }
  // After the chown, which clears the set-user-ID and set-group-ID bits.
  chmodSync(temporary, replaced.mode & 0o7777);
}

/** The name this process writes the data file for `path` under, beside it, until it is renamed into place. */
export function temporaryBeside(path: string): string {
  return `${path}.${process.pid}.tmp`;
}

/**
 * Removes a data file written under its temporary name, with the rollback journal SQLite
 * keeps beside it while it writes (`…tmp-journal`): a write that failed part-way (a full
 * disk) can leave the journal behind, and nothing would ever read it.
 */
export function removeTemporary(temporary: string): void {
  rmSync(temporary, { force: true });
  rmSync(`${temporary}-journal`, { force: true });
}

function fill(db: Database, contents: DataFileContents, collectGarbage: boolean): string {
  db.run(SCHEMA);
  const source = db.prepare("INSERT INTO sources VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)");
  contents.sources.forEach((s, position) =>
    source.run(position, s.name, s.origin, s.version, s.builtAt, s.license, s.attribution, s.url, s.format, JSON.stringify(s.fields), s.rowsV4, s.rowsV6, s.rangesV4, s.rangesV6, s.signal ?? ""),
  );
  const blobs = new Map<string, Uint8Array>([
    [SEGMENT_BLOBS[4].starts, u32Bytes(contents.v4.starts)],
    [SEGMENT_BLOBS[4].records, u32Bytes(contents.v4.records)],
    [SEGMENT_BLOBS[6].starts, u32Bytes(contents.v6.starts)],
    [SEGMENT_BLOBS[6].records, u32Bytes(contents.v6.records)],
    ...recordBlobs(contents.records, contents.fields, (record, field, index) => (field === "privacy" ? contents.privacyOf(index) : record[field as Exclude<RecordField, "privacy">])),
  ]);
  if (collectGarbage) Bun.gc(true);
  const hash = new TablesHash();
  const blob = db.prepare("INSERT INTO blobs VALUES (?1, ?2)");
  for (const name of blobNames(contents.fields)) {
    const bytes = blobs.get(name) as Uint8Array;
    blob.run(name, bytes);
    hash.add(name, bytes);
  }
  const dataVersion = dataVersionOf(contents.builtAt, hash.hex());
  const meta = db.prepare("INSERT INTO meta VALUES (?1, ?2)");
  meta.run("format", DATA_FORMAT);
  meta.run("built_at", contents.builtAt);
  meta.run("version", contents.version);
  meta.run("data_version", dataVersion);
  meta.run("fields", JSON.stringify(contents.fields));
  meta.run("built_by", contents.builtBy);
  if (contents.recipe !== undefined) meta.run(RECIPE_KEY, recipeText(contents.recipe));
  if (contents.hostingAsns !== undefined) {
    meta.run(HOSTING_ASNS_KEY, JSON.stringify([...contents.hostingAsns].sort(([a], [b]) => a - b)));
  }
  meta.run(CHECKSUMS_KEY, checksumsOf(db, blobs)); // last: it covers every row above
  return dataVersion;
}

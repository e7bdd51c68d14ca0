import type { Database } from "bun:sqlite";
import { blobNames, TablesHash, tablesHashOf } from "./layout.ts";
import { SQLITE_CORRUPT, sqlitePrimaryCode } from "../errors/sqlite-codes.ts";

/**
 * A data file's checksums, so that a damaged file (a flipped bit on disk, a copy cut
 * short and patched, an edit by hand) is refused instead of served: a stored value is
 * JSON text that answers are put together from, so one changed quote character would make
 * answers invalid JSON.
 *
 * The meta key `checksums` holds, as JSON, the SHA-256 (hex) of each blob's bytes, of the
 * other meta rows and of the sources table:
 *
 *   {"tables":{"v4_starts":"…",…,"values:asn":"…"},"meta":"…","sources":"…"}
 *
 * meta's text is JSON.stringify of its [key, value] rows but `checksums`, sorted by key;
 * sources' is JSON.stringify of its rows (objects, columns in table order) by position.
 * A file written before checksums were added has none: its blobs are checked against
 * the hash in its data version (32 bits of SHA-256, enough to catch damage by accident;
 * neither is a signature against someone who can write the file).
 */
export const CHECKSUMS_KEY = "checksums";

interface Checksums {
  readonly tables: Readonly<Record<string, string>>;
  readonly meta: string;
  readonly sources: string;
}

/**
 * The checksums of a data file being written, to store under CHECKSUMS_KEY: call it
 * once every other meta row, every source and every blob is in.
 */
export function checksumsOf(db: Database, blobs: ReadonlyMap<string, Uint8Array>): string {
  const tables: Record<string, string> = {};
  for (const [name, bytes] of blobs) tables[name] = sha256(bytes);
  const checksums: Checksums = { tables, meta: sha256(metaText(readMeta(db))), sources: sha256(sourcesText(db)) };
  return JSON.stringify(checksums);
}

/**
 * Checks a loaded data file against what was recorded when it was built, and throws an
 * Error naming what is damaged. `meta` and `blobs` are the file's rows as read (in the
 * same read transaction as `db`). Costs a SHA-256 pass over the blobs: about 10 ms for
 * the default data, 100 ms for a city-level file.
 */
export function checkDataFile(db: Database, meta: ReadonlyMap<string, string>, blobs: ReadonlyMap<string, Uint8Array>): void {
  const fields = fieldsOf(meta.get("fields"));
  const names = blobNames(fields);
  for (const name of names) if (!blobs.has(name)) throw damaged(`its ${name} table is missing`);
  const expected = new Set(names);
  for (const name of blobs.keys()) if (!expected.has(name)) throw damaged(`it has a table ${JSON.stringify(name)} it was not built with`);

  // Every answer carries the data version in a header (X-Data-Version), which a text of
  // another form (a line break) could make fail: checksums recomputed over it would not.
  const dataVersion = meta.get("data_version") ?? "";
  const versionHash = tablesHashOf(dataVersion);
  if (versionHash === null) throw damaged(`its data version ${JSON.stringify(dataVersion)} is not one iplookup writes`);
  const recorded = meta.get(CHECKSUMS_KEY);
  if (recorded === undefined) {
    checkDataVersion(dataVersion, versionHash, names, blobs);
    return;
  }
  const checksums = checksumsFrom(recorded);
  for (const name of names) {
    if (checksums.tables[name] !== sha256(blobs.get(name) as Uint8Array)) throw damaged(`its ${name} table does not match the checksum recorded when it was built`);
  }
  if (checksums.meta !== sha256(metaText(meta))) throw metaMismatch();
  if (checksums.sources !== sha256(readingTable("sources", () => sourcesText(db)))) throw damaged("its sources table does not match the checksum recorded when it was built");
}

/**
 * Throws when the file records readable checksums and its meta rows do not match them.
 * For a file whose `format` is not this iplookup's: a format value (or its key) changed
 * on disk reads as a file of another format, which the meta checksum tells apart. A
 * file of another format that records its meta checksum as this one does matches it;
 * one that records none, or another shape of checksums, is let be.
 */
export function checkMetaOfOtherFormat(meta: ReadonlyMap<string, string>): void {
  const recorded = meta.get(CHECKSUMS_KEY);
  if (recorded === undefined) return;
  let checksums: Checksums;
  try {
    checksums = checksumsFrom(recorded);
  } catch {
    return;
  }
  if (checksums.meta !== sha256(metaText(meta))) throw metaMismatch();
}

function metaMismatch(): Error {
  return damaged("its meta table does not match the checksum recorded when it was built");
}

function checkDataVersion(dataVersion: string, recorded: string, names: readonly string[], blobs: ReadonlyMap<string, Uint8Array>): void {
  const hash = new TablesHash();
  for (const name of names) hash.add(name, blobs.get(name) as Uint8Array);
  if (!hash.hex().startsWith(recorded)) throw damaged(`its tables do not match the hash in its data version (${dataVersion})`);
}

/** The error that refuses a damaged data file, saying what is damaged. */
export function damaged(what: string): Error {
  return new Error(`the data file is damaged: ${what}`);
}

/**
 * SQLite's SQLITE_CORRUPT ("database disk image is malformed") met reading a data file,
 * told as damage: a file cut short or pages changed on disk, not a file of another kind.
 * Null for any other error.
 */
export function malformedPages(error: unknown): Error | null {
  if (sqlitePrimaryCode(error) !== SQLITE_CORRUPT) return null;
  return damaged(`SQLite finds its pages malformed (${(error as { code: string }).code}), as a copy cut short or bytes changed on disk leave them`);
}

/**
 * Runs `read`, a query of the data file's `table`, and throws a failure as damage: a
 * query SQLite refuses on a file that has the data file's tables ("no such column:
 * position": a byte of the schema's text changed on disk) means the file is not as it
 * was written, as do malformed pages. For the tables read once the file is known to be
 * an iplookup data file (see hasDataFileTables for the first read).
 */
export function readingTable<T>(table: string, read: () => T): T {
  try {
    return read();
  } catch (error) {
    throw unreadableTable(table, error);
  }
}

/** The error for a read of the data file's `table` that failed (see readingTable). */
export function unreadableTable(table: string, error: unknown): Error {
  return malformedPages(error) ?? damaged(`its ${table} table cannot be read (SQLite: ${(error as Error).message})`);
}

/**
 * Whether the file has the tables every data file has (layout.ts's SCHEMA: meta,
 * sources, blobs), by their names in sqlite_schema: a file with them was written as a
 * data file, so a read of them that fails is damage; a SQLite file without them is a
 * file of another kind.
 */
export function hasDataFileTables(db: Database): boolean {
  try {
    const names = new Set(db.query<{ name: unknown }, []>("SELECT name FROM sqlite_schema WHERE type = 'table'").all().map((row) => row.name));
    return DATA_FILE_TABLES.every((name) => names.has(name));
  } catch {
    return false;
  }
}

const DATA_FILE_TABLES = ["meta", "sources", "blobs"];

function fieldsOf(text: string | undefined): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text ?? "");
  } catch {
    throw damaged("its field list cannot be read");
  }
  if (!Array.isArray(parsed) || !parsed.every((field) => typeof field === "string")) throw damaged("its field list cannot be read");
  return parsed as string[];
}

function checksumsFrom(text: string): Checksums {
  let parsed: Partial<Checksums> | null;
  try {
    parsed = JSON.parse(text) as Partial<Checksums> | null;
  } catch {
    parsed = null;
  }
  if (typeof parsed?.tables !== "object" || parsed.tables === null || typeof parsed.meta !== "string" || typeof parsed.sources !== "string") {
    throw damaged("its checksums cannot be read");
  }
  return parsed as Checksums;
}

function readMeta(db: Database): Map<string, string> {
  return new Map(db.query<{ key: string; value: string }, []>("SELECT key, value FROM meta").all().map((row) => [row.key, row.value]));
}

function metaText(meta: ReadonlyMap<string, string>): string {
  const rows = [...meta].filter(([key]) => key !== CHECKSUMS_KEY);
  rows.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify(rows);
}

function sourcesText(db: Database): string {
  return JSON.stringify(db.query("SELECT * FROM sources ORDER BY position").all());
}

function sha256(data: Uint8Array | string): string {
  return new Bun.CryptoHasher("sha256").update(data).digest("hex");
}

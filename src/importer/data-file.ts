import { Database } from "bun:sqlite";
import { renameSync, rmSync } from "node:fs";
import type { NetworkRecord, SourceInfo } from "../index/network-record.ts";
import type { FieldValue, RecordField } from "../index/record-fields.ts";
import type { PackedSegments } from "./merge.ts";

/**
 * The data file: SQLite, written once by the importer and only read after.
 *
 *   meta(key, value)      format (DATA_FORMAT), built_at (ISO 8601), version (the
 *                         sources' names), data_version (build time + table hash),
 *                         fields (JSON array: the result fields after `network`, in order),
 *                         built_by ("default": `bun run data:default`; "import": `data import`)
 *   sources(position, name, origin, version, built_at, license, attribution, url,
 *           format, fields, rows_v4, rows_v6, ranges_v4, ranges_v6)   position = precedence
 *   blobs(name, bytes)    packed little-endian arrays and text:
 *     v4_starts       u32 per segment: its first address
 *     v4_records      u32 per segment: its record id, 0 for not found
 *     v6_starts       4 × u32 per segment: its first address, most significant word first
 *     v6_records      u32 per segment
 *     record_values   u32 × fields per record: record i (1-based) at (i-1) × fields, one
 *                     index per field (in `fields` order) into that field's values
 *     values:FIELD    UTF-8: the field's distinct values as JSON texts, one per line
 *                     (JSON text never holds a raw line break)
 *
 * The tables are blobs so that loading is a copy of a few megabytes, not a walk over a
 * million rows; a record's JSON is put together when a lookup first needs it. Segments
 * partition each family's space (the first starts at 0) and neighbours differ in record.
 */
export const DATA_FORMAT = "iplookup-data-2";

export interface DataFileContents {
  readonly builtBy: "default" | "import";
  readonly version: string;
  readonly builtAt: string;
  readonly fields: readonly RecordField[];
  readonly sources: readonly SourceInfo[];
  /** Record i+1; each has every field in `fields`. */
  readonly records: readonly NetworkRecord[];
  readonly v4: PackedSegments;
  readonly v6: PackedSegments;
}

/**
 * Writes the data file beside `path` under a temporary name and renames it into place,
 * so a reader sees the old file or the new one, never a part; on failure the old file
 * is untouched and the temporary one removed. `check`, when given, is run on the
 * written file before it is renamed into place (e.g. loading it). Returns the data
 * version written.
 */
export function writeDataFile(path: string, contents: DataFileContents, check?: (written: string) => void): string {
  const temporary = `${path}.${process.pid}.tmp`;
  rmSync(temporary, { force: true });
  try {
    const db = new Database(temporary, { create: true });
    let dataVersion: string;
    try {
      dataVersion = db.transaction(() => fill(db, contents))();
    } finally {
      db.close();
    }
    check?.(temporary);
    renameSync(temporary, path);
    return dataVersion;
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}

function fill(db: Database, contents: DataFileContents): string {
  db.run(`
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE sources (position INTEGER PRIMARY KEY, name TEXT NOT NULL, origin TEXT NOT NULL, version TEXT NOT NULL,
      built_at TEXT NOT NULL, license TEXT NOT NULL, attribution TEXT NOT NULL, url TEXT NOT NULL, format TEXT NOT NULL,
      fields TEXT NOT NULL, rows_v4 INTEGER NOT NULL, rows_v6 INTEGER NOT NULL, ranges_v4 INTEGER NOT NULL, ranges_v6 INTEGER NOT NULL);
    CREATE TABLE blobs (name TEXT PRIMARY KEY, bytes BLOB NOT NULL);
  `);
  const source = db.prepare("INSERT INTO sources VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)");
  contents.sources.forEach((s, position) =>
    source.run(position, s.name, s.origin, s.version, s.builtAt, s.license, s.attribution, s.url, s.format, JSON.stringify(s.fields), s.rowsV4, s.rowsV6, s.rangesV4, s.rangesV6),
  );
  const blobs: Array<[string, Uint8Array]> = [
    ["v4_starts", bytesOf(contents.v4.starts)],
    ["v4_records", bytesOf(contents.v4.records)],
    ["v6_starts", bytesOf(contents.v6.starts)],
    ["v6_records", bytesOf(contents.v6.records)],
    ...packRecords(contents.records, contents.fields),
  ];
  const hash = new Bun.CryptoHasher("sha256");
  const blob = db.prepare("INSERT INTO blobs VALUES (?1, ?2)");
  for (const [name, bytes] of blobs) {
    blob.run(name, bytes);
    hash.update(name).update(bytes);
  }
  const dataVersion = `${contents.builtAt.replace(/[-:]|\.\d+/g, "")}-${hash.digest("hex").slice(0, 8)}`;
  const meta = db.prepare("INSERT INTO meta VALUES (?1, ?2)");
  meta.run("format", DATA_FORMAT);
  meta.run("built_at", contents.builtAt);
  meta.run("version", contents.version);
  meta.run("data_version", dataVersion);
  meta.run("fields", JSON.stringify(contents.fields));
  meta.run("built_by", contents.builtBy);
  return dataVersion;
}

/** The records as one index per field into per-field lists of distinct JSON values. */
function packRecords(records: readonly NetworkRecord[], fields: readonly RecordField[]): Array<[string, Uint8Array]> {
  const indexes = new Uint32Array(records.length * fields.length);
  const encoder = new TextEncoder();
  const lists = fields.map((field, f) => {
    const ids = new Map<FieldValue, number>();
    const texts: string[] = [];
    records.forEach((record, r) => {
      const value = record[field] ?? null;
      let id = ids.get(value);
      if (id === undefined) {
        id = texts.push(JSON.stringify(value)) - 1;
        ids.set(value, id);
      }
      indexes[r * fields.length + f] = id;
    });
    return [`values:${field}`, encoder.encode(texts.join("\n"))] as [string, Uint8Array];
  });
  return [["record_values", new Uint8Array(indexes.buffer)], ...lists];
}

/** The array's bytes (little-endian u32, as on every platform Bun runs on). */
function bytesOf(array: Uint32Array): Uint8Array {
  return new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
}

import { Database } from "bun:sqlite";
import { renameSync, rmSync } from "node:fs";
import type { NetworkRecord, SourceInfo } from "../index/network-record.ts";
import type { SegmentTable } from "./merge.ts";

/**
 * The data file: SQLite, written once by the importer and only read after.
 *
 *   meta(key, value)      format (DATA_FORMAT), built_at (ISO 8601), version
 *   sources(position, name, package, version, license, attribution, url,
 *           rows_v4, rows_v6, ranges_v4, ranges_v6)
 *   records(id, asn, as_name, country_code, country)       id ≥ 1; 0 means not found
 *   blobs(name, bytes)    the segment tables as packed little-endian arrays:
 *     v4_starts   u32 per segment: its first address
 *     v4_records  u32 per segment: its record id
 *     v6_starts   4 × u32 per segment: its first address, most significant word first
 *     v6_records  u32 per segment
 *
 * The tables are blobs so that loading is a copy of a few megabytes, not a walk over a
 * million rows. Segments partition each family's space (the first starts at 0) and
 * neighbours differ in record.
 */
export const DATA_FORMAT = "iplookup-data-1";

export interface DataFileContents {
  readonly version: string;
  readonly builtAt: string;
  readonly sources: readonly SourceInfo[];
  readonly records: readonly NetworkRecord[];
  readonly v4: SegmentTable;
  readonly v6: SegmentTable;
}

/**
 * Writes the data file beside `path` under a temporary name and renames it into place,
 * so a reader sees the old file or the new one, never a part; on failure the old file
 * is untouched and the temporary one removed.
 */
export function writeDataFile(path: string, contents: DataFileContents): void {
  const temporary = `${path}.${process.pid}.tmp`;
  rmSync(temporary, { force: true });
  try {
    const db = new Database(temporary, { create: true });
    try {
      db.transaction(() => fill(db, contents))();
    } finally {
      db.close();
    }
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}

function fill(db: Database, contents: DataFileContents): void {
  db.run(`
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE sources (position INTEGER PRIMARY KEY, name TEXT NOT NULL, package TEXT NOT NULL, version TEXT NOT NULL,
      license TEXT NOT NULL, attribution TEXT NOT NULL, url TEXT NOT NULL,
      rows_v4 INTEGER NOT NULL, rows_v6 INTEGER NOT NULL, ranges_v4 INTEGER NOT NULL, ranges_v6 INTEGER NOT NULL);
    CREATE TABLE records (id INTEGER PRIMARY KEY, asn INTEGER, as_name TEXT, country_code TEXT, country TEXT);
    CREATE TABLE blobs (name TEXT PRIMARY KEY, bytes BLOB NOT NULL);
  `);
  const meta = db.prepare("INSERT INTO meta VALUES (?1, ?2)");
  meta.run("format", DATA_FORMAT);
  meta.run("built_at", contents.builtAt);
  meta.run("version", contents.version);
  const source = db.prepare("INSERT INTO sources VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)");
  contents.sources.forEach((s, position) =>
    source.run(position, s.name, s.package, s.version, s.license, s.attribution, s.url, s.rowsV4, s.rowsV6, s.rangesV4, s.rangesV6),
  );
  const record = db.prepare("INSERT INTO records VALUES (?1, ?2, ?3, ?4, ?5)");
  contents.records.forEach((r, i) => record.run(i + 1, r.asn, r.as_name, r.country_code, r.country));
  const blob = db.prepare("INSERT INTO blobs VALUES (?1, ?2)");
  blob.run("v4_starts", packStarts(contents.v4.starts, 1));
  blob.run("v4_records", packU32(contents.v4.records));
  blob.run("v6_starts", packStarts(contents.v6.starts, 4));
  blob.run("v6_records", packU32(contents.v6.records));
}

function packU32(values: readonly number[]): Uint8Array {
  return new Uint8Array(Uint32Array.from(values).buffer);
}

/** Addresses as `words` little-endian u32 each, most significant word first. */
function packStarts(starts: readonly bigint[], words: 1 | 4): Uint8Array {
  const packed = new Uint32Array(starts.length * words);
  starts.forEach((start, i) => {
    for (let w = 0; w < words; w++) packed[i * words + w] = Number((start >> BigInt(32 * (words - 1 - w))) & 0xffffffffn);
  });
  return new Uint8Array(packed.buffer);
}

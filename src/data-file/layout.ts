/**
 * The data file: SQLite, written once by the importer (importer/data-file.ts) and only
 * read after (index/range-index.ts). This module is what both agree on.
 *
 *   meta(key, value)      format (DATA_FORMAT), built_at (ISO 8601), version (the
 *                         sources' names), data_version (build time + table hash, see
 *                         dataVersionOf), fields (JSON array: the result fields after
 *                         `network`, in order), built_by ("default": `bun run data:default`;
 *                         "import": `data import`), recipe (how to build it again: see
 *                         recipe.ts; only files made by `data import` since it was
 *                         added have one), checksums (see checksums.ts; files written
 *                         before it was added have none), hosting_asns (the hosting
 *                         list the `privacy` field's hosting signal was built with, as
 *                         JSON [[asn, provider], …] by AS number; only files built with
 *                         one have it)
 *   sources(position, name, origin, version, built_at, license, attribution, url,
 *           format, fields, rows_v4, rows_v6, ranges_v4, ranges_v6, signal)
 *                         position = precedence; signal: the privacy signal the source
 *                         gives ("hosting", "tor", …) or "" (files from before signals
 *                         have no such column)
 *   blobs(name, bytes)    packed little-endian arrays and text:
 *     v4_starts       u32 per segment: its first address
 *     v4_records      u32 per segment: its record id, 0 for not found
 *     v6_starts       4 × u32 per segment: its first address, most significant word first
 *                     (packed-address.ts)
 *     v6_records      u32 per segment
 *     record_values   u32 × fields per record: record i (1-based) at (i-1) × fields, one
 *                     index per field (in `fields` order) into that field's values
 *     values:FIELD    UTF-8: the field's distinct values as JSON texts, one per line
 *                     (JSON text never holds a raw line break), as JSON.stringify writes
 *                     them; `privacy`'s are objects (index/privacy.ts). Loading checks
 *                     that each is of its field's type (value-lines.ts). Files from before
 *                     signals have no `privacy` field: they are read as having no source
 *                     of any signal.
 *
 * The tables are blobs so that loading is a copy of a few megabytes, not a walk over a
 * million rows; a record's JSON is put together when a lookup first needs it. Segments
 * partition each family's space (the first starts at 0, each after the one before) and
 * neighbours differ in record; loading checks this (a file whose checksums were computed
 * over tables that break it is refused as damaged).
 */
export const DATA_FORMAT = "iplookup-data-2";

export const SCHEMA = `
  CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
  CREATE TABLE sources (position INTEGER PRIMARY KEY, name TEXT NOT NULL, origin TEXT NOT NULL, version TEXT NOT NULL,
    built_at TEXT NOT NULL, license TEXT NOT NULL, attribution TEXT NOT NULL, url TEXT NOT NULL, format TEXT NOT NULL,
    fields TEXT NOT NULL, rows_v4 INTEGER NOT NULL, rows_v6 INTEGER NOT NULL, ranges_v4 INTEGER NOT NULL, ranges_v6 INTEGER NOT NULL,
    signal TEXT NOT NULL);
  CREATE TABLE blobs (name TEXT PRIMARY KEY, bytes BLOB NOT NULL);
`;

/** The segment tables' blob names, per family. */
export const SEGMENT_BLOBS = {
  4: { starts: "v4_starts", records: "v4_records" },
  6: { starts: "v6_starts", records: "v6_records" },
} as const;

export const RECORD_VALUES_BLOB = "record_values";

/** The meta key of the hosting list (see the table above). */
export const HOSTING_ASNS_KEY = "hosting_asns";

/** The blob holding one field's distinct values. */
export function valuesBlob(field: string): string {
  return `values:${field}`;
}

/**
 * Every blob a data file with these fields has, in the order they are written and
 * hashed (the data version's hash depends on it).
 */
export function blobNames(fields: readonly string[]): string[] {
  return [SEGMENT_BLOBS[4].starts, SEGMENT_BLOBS[4].records, SEGMENT_BLOBS[6].starts, SEGMENT_BLOBS[6].records, RECORD_VALUES_BLOB, ...fields.map(valuesBlob)];
}

/**
 * The records as blobs: record_values (one index per field into per-field lists of
 * distinct values) and a values:FIELD list per field. `valueOf` gives a record's value
 * of a field (anything JSON.stringify writes as one line; undefined is written as null),
 * given the record, the field and the record's index. Values are told apart by identity
 * (objects, such as privacies, are interned by their maker).
 */
export function recordBlobs<R>(records: readonly R[], fields: readonly string[], valueOf: (record: R, field: string, index: number) => unknown): Array<[string, Uint8Array]> {
  const indexes = new Uint32Array(records.length * fields.length);
  const encoder = new TextEncoder();
  const lists = fields.map((field, f) => {
    const ids = new Map<unknown, number>();
    const texts: string[] = [];
    records.forEach((record, r) => {
      const value = valueOf(record, field, r) ?? null;
      let id = ids.get(value);
      if (id === undefined) {
        id = texts.push(JSON.stringify(value)) - 1;
        ids.set(value, id);
      }
      indexes[r * fields.length + f] = id;
    });
    return [valuesBlob(field), encoder.encode(texts.join("\n"))] as [string, Uint8Array];
  });
  return [[RECORD_VALUES_BLOB, u32Bytes(indexes)], ...lists];
}

/** A u32 array's bytes (little-endian, as on every platform Bun runs on). */
export function u32Bytes(array: Uint32Array): Uint8Array {
  return new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
}

/**
 * The data version: the build time (`20261122T224623Z`) and the first 8 hex digits of
 * the SHA-256 of every blob's name and bytes, in blobNames order
 * (`20261122T224623Z-7dffc6c2`). Two files with the same tables have the same hash.
 */
export function dataVersionOf(builtAt: string, tablesHash: string): string {
  return `${builtAt.replace(/[-:]|\.\d+/g, "")}-${tablesHash.slice(0, 8)}`;
}

/** The hash of the data version (see dataVersionOf) as a hasher to feed the blobs to. */
export class TablesHash {
  private readonly hash = new Bun.CryptoHasher("sha256");

  add(name: string, bytes: Uint8Array): void {
    this.hash.update(name).update(bytes);
  }

  hex(): string {
    return this.hash.digest("hex");
  }
}

/** The hash part of a data version, or null when it is not of the form dataVersionOf writes. */
export function tablesHashOf(dataVersion: string): string | null {
  return /^[0-9]{8}T[0-9]{6}Z-([0-9a-f]{8})$/.exec(dataVersion)?.[1] ?? null;
}

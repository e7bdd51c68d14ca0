import { Database } from "bun:sqlite";
import { readFileSync } from "node:fs";
import type { Address } from "../address/address.ts";
import { ipv4Text, ipv6Text } from "../address/parse.ts";
import { lastStartAtOrBelow128, lastStartAtOrBelow32 } from "../address/sorted-search.ts";
import { DATA_FORMAT } from "../importer/data-file.ts";
import type { DataSetInfo, NetworkRecord, SourceInfo } from "./network-record.ts";

/** What the index knows about an address. */
export interface IndexHit {
  /** The largest CIDR block around the address on which the record is the same. */
  readonly network: string;
  readonly record: NetworkRecord;
}

/**
 * The range index: each family's segment table in typed arrays, searched by "last
 * segment start ≤ address" (see importer/data-file.ts for the layout and invariants).
 * Immutable once built; a data reload builds a new one and swaps it in whole.
 */
export class RangeIndex {
  private constructor(
    private readonly v4Starts: Uint32Array,
    private readonly v4Records: Uint32Array,
    private readonly v6Starts: Uint32Array,
    private readonly v6Records: Uint32Array,
    /** records[0] is unused: id 0 means not found. */
    private readonly records: readonly NetworkRecord[],
    readonly info: DataSetInfo,
  ) {}

  /**
   * Loads a data file. It is read whole into memory first, so the same path works for a
   * file on disk and for the one embedded in the compiled binary, and a file replaced
   * while it is read is never seen half old, half new.
   */
  static open(path: string): RangeIndex {
    let db: Database;
    try {
      db = Database.deserialize(readFileSync(path));
    } catch (error) {
      throw new Error(`cannot open the data file ${path}: ${(error as Error).message}`);
    }
    try {
      return RangeIndex.fromDatabase(db);
    } finally {
      db.close();
    }
  }

  /** Loads an index from an open data file (from a path, or from bytes with Database.deserialize). */
  static fromDatabase(db: Database): RangeIndex {
    let meta: Map<string, string>;
    try {
      meta = new Map(db.query<{ key: string; value: string }, []>("SELECT key, value FROM meta").all().map((row) => [row.key, row.value]));
    } catch (error) {
      throw new Error(`not an iplookup data file: ${(error as Error).message}`);
    }
    if (meta.get("format") !== DATA_FORMAT) throw new Error(`not an iplookup data file of format ${DATA_FORMAT} (found ${meta.get("format")})`);
    const blobs = new Map(db.query<{ name: string; bytes: Uint8Array }, []>("SELECT name, bytes FROM blobs").all().map((row) => [row.name, row.bytes]));
    const u32 = (name: string) => {
      const bytes = blobs.get(name);
      if (!bytes || bytes.byteLength % 4 !== 0) throw new Error(`the data file's ${name} table is missing or damaged`);
      return new Uint32Array(bytes.slice().buffer);
    };
    const v4Starts = u32("v4_starts");
    const v4Records = u32("v4_records");
    const v6Starts = u32("v6_starts");
    const v6Records = u32("v6_records");
    if (v4Starts.length !== v4Records.length || v6Starts.length !== v6Records.length * 4 || v4Starts[0] !== 0 || v6Records.length === 0) {
      throw new Error("the data file's segment tables do not match");
    }
    const records: NetworkRecord[] = [{ asn: null, as_name: null, country_code: null, country: null }];
    for (const row of db.query<NetworkRecord & { id: number }, []>("SELECT id, asn, as_name, country_code, country FROM records ORDER BY id").all()) {
      if (row.id !== records.length) throw new Error("the data file's records are not numbered 1…n");
      records.push(Object.freeze({ asn: row.asn, as_name: row.as_name, country_code: row.country_code, country: row.country }));
    }
    const sources = db
      .query<Record<string, string | number>, []>("SELECT * FROM sources ORDER BY position")
      .all()
      .map(
        (row): SourceInfo => ({
          name: String(row.name),
          package: String(row.package),
          version: String(row.version),
          license: String(row.license),
          attribution: String(row.attribution),
          url: String(row.url),
          rowsV4: Number(row.rows_v4),
          rowsV6: Number(row.rows_v6),
          rangesV4: Number(row.ranges_v4),
          rangesV6: Number(row.ranges_v6),
        }),
      );
    const info: DataSetInfo = {
      builtAt: meta.get("built_at") ?? "",
      version: meta.get("version") ?? "",
      sources,
      segmentsV4: v4Starts.length,
      segmentsV6: v6Records.length,
      records: records.length - 1,
    };
    return new RangeIndex(v4Starts, v4Records, v6Starts, v6Records, records, info);
  }

  /** The record and network for an address, or null when no data covers it. */
  lookup(address: Address): IndexHit | null {
    return address.version === 4 ? this.lookup4(address.value) : this.lookup6(address.words);
  }

  private lookup4(value: number): IndexHit | null {
    const starts = this.v4Starts;
    const low = lastStartAtOrBelow32(starts, value);
    const id = this.v4Records[low] as number;
    if (id === 0) return null;
    // The block may not reach below the segment's start nor above its end: its prefix
    // must be longer than the common prefix of the address and the neighbour outside.
    const start = starts[low] as number;
    const next = low + 1 < starts.length ? (starts[low + 1] as number) : -1;
    let prefix = 0;
    if (start > 0) prefix = Math.max(prefix, commonPrefix32(value, start - 1) + 1);
    if (next >= 0) prefix = Math.max(prefix, commonPrefix32(value, next) + 1);
    const network = prefix === 0 ? 0 : (value & (0xffffffff << (32 - prefix))) >>> 0;
    return { network: `${ipv4Text(network)}/${prefix}`, record: this.records[id] as NetworkRecord };
  }

  private lookup6(words: readonly number[]): IndexHit | null {
    const starts = this.v6Starts;
    const low = lastStartAtOrBelow128(starts, words);
    const id = this.v6Records[low] as number;
    if (id === 0) return null;
    let prefix = 0;
    const offset = low * 4;
    if (!isZeroAt(starts, offset)) prefix = Math.max(prefix, commonPrefix128(words, minusOneAt(starts, offset), 0) + 1);
    if (offset + 4 < starts.length) prefix = Math.max(prefix, commonPrefix128(words, starts, offset + 4) + 1);
    return { network: `${ipv6Text(maskWords(words, prefix))}/${prefix}`, record: this.records[id] as NetworkRecord };
  }
}

function commonPrefix32(a: number, b: number): number {
  return a === b ? 32 : Math.clz32((a ^ b) >>> 0);
}

/** Common leading bits of `a` and the four words of `b` from `offset`. */
function commonPrefix128(a: readonly number[], b: ArrayLike<number>, offset: number): number {
  for (let w = 0; w < 4; w++) {
    const x = ((a[w] as number) ^ (b[offset + w] as number)) >>> 0;
    if (x !== 0) return w * 32 + Math.clz32(x);
  }
  return 128;
}

function isZeroAt(starts: Uint32Array, offset: number): boolean {
  return starts[offset] === 0 && starts[offset + 1] === 0 && starts[offset + 2] === 0 && starts[offset + 3] === 0;
}

// Scratch words for one lookup at a time (lookups are synchronous).
const BELOW = new Uint32Array(4);
const MASKED = new Uint32Array(4);

/** The address one below the start at `offset` (which is not zero), in BELOW. */
function minusOneAt(starts: Uint32Array, offset: number): Uint32Array {
  const words = BELOW;
  for (let w = 0; w < 4; w++) words[w] = starts[offset + w] as number;
  for (let w = 3; w >= 0; w--) {
    if (words[w] !== 0) {
      words[w] = (words[w] as number) - 1;
      return words;
    }
    words[w] = 0xffffffff;
  }
  return words;
}

/** The first `prefix` bits of the address, in MASKED. */
function maskWords(words: readonly number[], prefix: number): Uint32Array {
  for (let w = 0; w < 4; w++) {
    const bits = Math.min(32, Math.max(0, prefix - w * 32));
    const word = words[w] as number;
    MASKED[w] = bits === 0 ? 0 : bits === 32 ? word : (word & (0xffffffff << (32 - bits))) >>> 0;
  }
  return MASKED;
}

import { Database } from "bun:sqlite";
import { readFileSync } from "node:fs";
import type { Address } from "../address/address.ts";
import { network128, network32 } from "../address/cidr.ts";
import { ipv4Text, ipv6Text } from "../address/parse.ts";
import { lastStartAtOrBelow128, lastStartAtOrBelow32, segmentPrefix128, segmentPrefix32 } from "../address/sorted-search.ts";
import { isEmbedded } from "../config/paths.ts";
import { checkDataFile, checkMetaOfOtherFormat, damaged, hasDataFileTables, malformedPages, readingTable, unreadableTable } from "../data-file/checksums.ts";
import { DATA_FORMAT, HOSTING_ASNS_KEY, SEGMENT_BLOBS } from "../data-file/layout.ts";
import { readAddress } from "../data-file/packed-address.ts";
import { checkValueLines } from "../data-file/value-lines.ts";
import type { AsnImage } from "../asn/asn-image.ts";
import type { DataSetInfo, NetworkRecord, SourceInfo } from "./network-record.ts";
import { isSignal, NO_SIGNALS, uncoveredPrivacy, type Signal } from "./privacy.ts";
import { isRecordField, type RecordField } from "./record-fields.ts";
import { dataFileProblem } from "../errors/file-access.ts";

/**
 * What the index knows about an address: the largest CIDR block around it on which the
 * record is the same, and the record, as the JSON members a result writes after
 * `"network":"…",` (see importer/data-file.ts). The object is parsed only when asked for.
 */
export class IndexHit {
  constructor(
    /** For IPv4: the network's first address (unsigned); -1 for IPv6. */
    readonly ipv4Network: number,
    /** For IPv6: the network's first address as four 32-bit words; null for IPv4. */
    readonly ipv6Network: readonly [number, number, number, number] | null,
    readonly prefix: number,
    /** The record's members as UTF-8 JSON. */
    readonly membersBytes: Uint8Array,
  ) {}

  /** The network in CIDR notation. */
  get network(): string {
    const first = this.ipv6Network ? ipv6Text(this.ipv6Network) : ipv4Text(this.ipv4Network);
    return `${first}/${this.prefix}`;
  }

  get membersJson(): string {
    return membersDecoder.decode(this.membersBytes);
  }

  get record(): NetworkRecord {
    return recordOf(this.membersBytes);
  }
}

const membersDecoder = new TextDecoder();

/** A record from its members' JSON (the text after a result's opening brace). */
function recordOf(members: Uint8Array): NetworkRecord {
  return JSON.parse(`{${membersDecoder.decode(members)}`) as NetworkRecord;
}

/**
 * Everything a RangeIndex answers from, in typed arrays over SharedArrayBuffers: posted
 * to another thread, an image is shared, not copied, so every worker thread of a server
 * answers from one copy of the data (see serve/). Immutable once built.
 */
export interface IndexImage {
  readonly v4Starts: Uint32Array;
  readonly v4Records: Uint32Array;
  readonly v6Starts: Uint32Array;
  readonly v6Records: Uint32Array;
  /** The prefix tables in front of the searches (see `prefixTable`). */
  readonly v4Prefixes: Uint32Array;
  readonly v6Prefixes: Uint32Array;
  /** The second level in front of IPv6 searches in dense prefixes (see `denseTable`). */
  readonly v6Dense: Uint32Array;
  /** Per record, an index per field into that field's values. */
  readonly recordValues: Uint32Array;
  /** Per field, its distinct values as UTF-8 JSON texts, one after another. */
  readonly values: readonly Uint8Array[];
  /** Per field, where each value starts in `values`, and one more entry for the end. */
  readonly valueOffsets: readonly Uint32Array[];
  /** The AS numbers of the data's hosting list, ascending; null when it was built without one. */
  readonly hostingAsns: Uint32Array | null;
  readonly info: DataSetInfo;
  /**
   * The AS index built from this image (src/asn/), set once it is built. A server builds
   * it on a loader thread and posts the image with it to its worker threads, so they
   * share it (see LiveIndex.buildAsnIndex).
   */
  asn?: AsnImage;
}

/**
 * The range index: each family's segment table in typed arrays, searched by "last
 * segment start ≤ address" (see importer/data-file.ts for the layout and invariants).
 * Immutable once built; a data reload builds a new one and swaps it in whole.
 */
export class RangeIndex {
  /**
   * Records' members put together on first use, by id. Bounded: when it holds
   * MEMBERS_CACHE_LIMIT entries it starts again, so a data set with millions of records
   * does not keep them all put together.
   */
  private members: Array<Uint8Array | undefined>;
  private cached = 0;
  /** `"asn":`, `,"as_name":`, …: what comes before each field's value, as UTF-8. */
  private readonly keys: readonly Uint8Array[];
  private readonly v4Starts: Uint32Array;
  private readonly v4Records: Uint32Array;
  private readonly v6Starts: Uint32Array;
  private readonly v6Records: Uint32Array;
  private readonly v4Prefixes: Uint32Array;
  private readonly v6Prefixes: Uint32Array;
  private readonly v6Dense: Uint32Array;
  private readonly recordValues: Uint32Array;
  private readonly values: readonly Uint8Array[];
  private readonly valueOffsets: readonly Uint32Array[];
  readonly info: DataSetInfo;
  /** The members of a result with nothing found (every field null), as UTF-8 JSON. */
  readonly notFoundBytes: Uint8Array;

  private constructor(readonly image: IndexImage) {
    ({ v4Starts: this.v4Starts, v4Records: this.v4Records, v6Starts: this.v6Starts, v6Records: this.v6Records } = image);
    ({ v4Prefixes: this.v4Prefixes, v6Prefixes: this.v6Prefixes, v6Dense: this.v6Dense } = image);
    ({ recordValues: this.recordValues, values: this.values, valueOffsets: this.valueOffsets, info: this.info } = image);
    this.members = new Array(this.info.records + 1);
    this.keys = this.info.fields.map((field, f) => membersEncoder.encode(`${f === 0 ? "" : ","}"${field}":`));
    // Nothing found: every field null but `privacy`, which says which signals the data has.
    const uncovered = JSON.stringify(uncoveredPrivacy(this.info.sources.flatMap((source) => (source.signal === null ? [] : [source.signal]))));
    this.notFoundBytes = membersEncoder.encode(`${this.info.fields.map((field) => `"${field}":${field === "privacy" ? uncovered : "null"}`).join(",")}}`);
  }

  /** The record of a result with nothing found: every field null but `privacy` (see notFoundBytes). */
  get notFoundRecord(): NetworkRecord {
    return recordOf(this.notFoundBytes);
  }

  /**
   * Whether the data's hosting list (CONTRACT §15) names AS number `asn`: true or
   * false, or null when the data was built without a hosting list.
   */
  hostingOfAsn(asn: number): boolean | null {
    const list = this.image.hostingAsns;
    if (list === null) return null;
    let low = 0;
    let high = list.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if ((list[mid] as number) < asn) low = mid + 1;
      else high = mid;
    }
    return low < list.length && list[low] === asn;
  }

  /** An index over an image, built here or received from another thread. */
  static fromImage(image: IndexImage): RangeIndex {
    return new RangeIndex(image);
  }

  /**
   * Loads a data file, in one read transaction, so a file replaced while it is read is
   * never seen half old, half new.
   */
  static open(path: string): RangeIndex {
    let db: Database;
    try {
      // A file on disk is opened in place (what is read comes from the inode opened, even
      // if the file is renamed over meanwhile); one embedded in the binary is read whole.
      db = isEmbedded(path) ? Database.deserialize(readFileSync(path)) : new Database(path, { readonly: true });
    } catch (error) {
      throw new Error(`cannot open the data file ${path}: ${dataFileProblem(path, error)}`);
    }
    try {
      return RangeIndex.fromDatabase(db);
    } finally {
      db.close();
    }
  }

  /** Loads an index from an open data file (from a path, or from bytes with Database.deserialize). */
  static fromDatabase(db: Database): RangeIndex {
    try {
      return db.transaction(() => RangeIndex.read(db))();
    } catch (error) {
      throw malformedPages(error) ?? error;
    }
  }

  private static read(db: Database): RangeIndex {
    let meta: Map<string, string>;
    try {
      meta = new Map(db.query<{ key: string; value: string }, []>("SELECT key, value FROM meta").all().map((row) => [row.key, row.value]));
    } catch (error) {
      // Only a file without the data file's tables is one of another kind; in one with
      // them, a meta table SQLite cannot read as written is damage.
      if (malformedPages(error) === null && !hasDataFileTables(db)) throw new Error(`not an iplookup data file: ${(error as Error).message}`);
      throw unreadableTable("meta", error);
    }
    if (meta.get("format") !== DATA_FORMAT) {
      checkMetaOfOtherFormat(meta);
      throw new Error(`not an iplookup data file of format ${DATA_FORMAT} (found ${meta.get("format")})`);
    }
    const rows = readingTable("blobs", () => db.query<{ name: unknown; bytes: unknown }, []>("SELECT name, bytes FROM blobs").all());
    const blobs = new Map<string, Uint8Array>();
    for (const { name, bytes } of rows) {
      // A bit of a row's header changed on disk can make a blob read as text, whose
      // checksum (of its UTF-8) is the blob's when its bytes are ASCII.
      if (typeof name !== "string") throw damaged("its blobs table holds a name that is not text");
      if (!(bytes instanceof Uint8Array)) throw damaged(`its table ${JSON.stringify(name)} is not stored as bytes`);
      blobs.set(name, bytes);
    }
    checkDataFile(db, meta, blobs);
    const bytesOf = (name: string) => {
      const bytes = blobs.get(name);
      if (!bytes) throw damaged(`its ${name} table is missing`);
      return bytes;
    };
    const u32 = (name: string) => {
      const bytes = bytesOf(name);
      if (bytes.byteLength % 4 !== 0) throw damaged(`its ${name} table is not a whole number of 32-bit words`);
      return new Uint32Array(shared(bytes).buffer);
    };
    const v4Starts = u32("v4_starts");
    const v4Records = u32("v4_records");
    const v6Starts = u32("v6_starts");
    const v6Records = u32("v6_records");
    if (v4Starts.length !== v4Records.length || v6Starts.length !== v6Records.length * 4 || v4Records.length === 0 || v6Records.length === 0) {
      throw damaged("its segment tables do not match");
    }
    let fields = parseFields(meta.get("fields"));
    let recordValues = u32("record_values");
    const recordCount = recordValues.length / fields.length;
    const values = fields.map((field) => shared(bytesOf(`values:${field}`)));
    const valueOffsets = values.map(valueStarts);
    fields.forEach((field, f) => checkValueLines(field, values[f] as Uint8Array, valueOffsets[f] as Uint32Array));
    if (!Number.isInteger(recordCount)) throw damaged("its record_values table does not hold a whole number of records");
    // A file with checksums recomputed over tables out of order would load and answer
    // from the wrong segments; the searches and networks rely on every one of these.
    checkSegments(4, v4Starts, v4Records, recordCount);
    checkSegments(6, v6Starts, v6Records, recordCount);
    for (let f = 0; f < fields.length; f++) {
      const count = (valueOffsets[f] as Uint32Array).length - 1;
      for (let r = f; r < recordValues.length; r += fields.length) {
        if ((recordValues[r] as number) >= count) throw damaged(`its ${fields[f]} values do not match its records`);
      }
    }
    const sourceRows = readingTable("sources", () => db.query<Record<string, string | number>, []>("SELECT * FROM sources ORDER BY position").all());
    // A column renamed on disk would read as "undefined" in a file without checksums (a
    // file with them is refused by its sources checksum before this).
    for (const column of SOURCE_COLUMNS) if (sourceRows.length > 0 && !(column in (sourceRows[0] as object))) throw damaged(`its sources table has no ${column} column`);
    const sources = sourceRows.map(
      (row): SourceInfo => ({
        name: String(row.name),
        origin: String(row.origin),
        version: String(row.version),
        builtAt: String(row.built_at),
        license: String(row.license),
        attribution: String(row.attribution),
        url: String(row.url),
        format: String(row.format),
        fields: parseFields(String(row.fields)),
        rowsV4: Number(row.rows_v4),
        rowsV6: Number(row.rows_v6),
        rangesV4: Number(row.ranges_v4),
        rangesV6: Number(row.ranges_v6),
        signal: signalOf(row.signal),
      }),
    );
    if (!fields.includes("privacy")) {
      // A file from before signals: every record gets the privacy of data with no signal source.
      ({ fields, recordValues } = withPrivacyColumn(fields, recordValues));
      values.push(shared(membersEncoder.encode(JSON.stringify(NO_SIGNALS))));
      valueOffsets.push(valueStarts(values[values.length - 1] as Uint8Array));
    }
    const info: DataSetInfo = {
      builtAt: meta.get("built_at") ?? "",
      version: meta.get("version") ?? "",
      dataVersion: meta.get("data_version") ?? "",
      fields,
      sources,
      segmentsV4: v4Starts.length,
      segmentsV6: v6Records.length,
      records: recordCount,
    };
    const v4Prefixes = prefixTable(v4Starts, 1);
    const v6Prefixes = prefixTable(v6Starts, 4);
    const v6Dense = denseTable(v6Starts, v6Prefixes);
    const hostingAsns = hostingAsnsOf(meta.get(HOSTING_ASNS_KEY));
    return new RangeIndex({ v4Starts, v4Records, v6Starts, v6Records, v4Prefixes, v6Prefixes, v6Dense, recordValues, values, valueOffsets, hostingAsns, info });
  }

  /**
   * Each segment of a family in order, as [first address, last address, record id]
   * (id 0: not found). For building a new data set on top of this one.
   */
  *segments(family: 4 | 6): Generator<[start: bigint, end: bigint, id: number]> {
    const words = family === 4 ? 1 : 4;
    const starts = family === 4 ? this.v4Starts : this.v6Starts;
    const records = family === 4 ? this.v4Records : this.v6Records;
    const startAt = (i: number) => readAddress(starts, words, i * words);
    const last = (1n << BigInt(32 * words)) - 1n;
    let start = startAt(0);
    for (let i = 0; i < records.length; i++) {
      const next = i + 1 < records.length ? startAt(i + 1) : last + 1n;
      yield [start, next - 1n, records[i] as number];
      start = next;
    }
  }

  /** Record `id` (1 … info.records) with every field of the data set. */
  record(id: number): NetworkRecord {
    return recordOf(this.membersOf(id));
  }

  /** The record and network for an address, or null when no data covers it. */
  lookup(address: Address): IndexHit | null {
    return address.version === 4 ? this.lookup4(address.value) : this.lookup6(address.words);
  }

  /**
   * The index of the segment of the address's family table that holds it (the search
   * `lookup` makes, by its prefix tables): for walking from it to its neighbours in
   * `image`'s starts and records, as a corrected answer's network does. Not on the
   * path of a lookup, which keeps its own copy of the search.
   */
  segmentIndex(address: Address): number {
    if (address.version === 4) {
      const top = address.value >>> 16;
      return lastStartAtOrBelow32(this.v4Starts, address.value, this.v4Prefixes[top], this.v4Prefixes[top + 1]);
    }
    const words = address.words;
    const first = words[0] as number;
    const top = first >>> 16;
    const dense = this.v6Dense[top] as number;
    if (dense === 0) return lastStartAtOrBelow128(this.v6Starts, words, this.v6Prefixes[top], this.v6Prefixes[top + 1]);
    const at = dense + ((first >>> 8) & 0xff);
    return lastStartAtOrBelow128(this.v6Starts, words, this.v6Dense[at], this.v6Dense[at + 1]);
  }

  private lookup4(value: number): IndexHit | null {
    const starts = this.v4Starts;
    const top = value >>> 16;
    const low = lastStartAtOrBelow32(starts, value, this.v4Prefixes[top], this.v4Prefixes[top + 1]);
    const id = this.v4Records[low] as number;
    if (id === 0) return null;
    const prefix = segmentPrefix32(starts, low, value);
    return new IndexHit(network32(value, prefix), null, prefix, this.membersOf(id));
  }

  private lookup6(words: readonly number[]): IndexHit | null {
    const starts = this.v6Starts;
    const first = words[0] as number;
    const top = first >>> 16;
    const dense = this.v6Dense[top] as number;
    let low: number;
    if (dense === 0) {
      low = lastStartAtOrBelow128(starts, words, this.v6Prefixes[top], this.v6Prefixes[top + 1]);
    } else {
      const at = dense + ((first >>> 8) & 0xff);
      low = lastStartAtOrBelow128(starts, words, this.v6Dense[at], this.v6Dense[at + 1]);
    }
    const id = this.v6Records[low] as number;
    if (id === 0) return null;
    const prefix = segmentPrefix128(starts, low, words);
    return new IndexHit(-1, network128(words, prefix), prefix, this.membersOf(id));
  }

  private membersOf(id: number): Uint8Array {
    let bytes = this.members[id];
    if (bytes === undefined) {
      bytes = this.assembleMembers(id);
      if (++this.cached > MEMBERS_CACHE_LIMIT) {
        this.members = new Array(this.members.length);
        this.cached = 1;
      }
      this.members[id] = bytes;
    }
    return bytes;
  }

  /** Record `id`'s members: each field's key and value, and the closing brace. */
  private assembleMembers(id: number): Uint8Array {
    const keys = this.keys;
    const offset = (id - 1) * keys.length;
    let length = 1;
    for (let f = 0; f < keys.length; f++) {
      const starts = this.valueOffsets[f] as Uint32Array;
      const value = this.recordValues[offset + f] as number;
      length += (keys[f] as Uint8Array).length + (starts[value + 1] as number) - (starts[value] as number) - 1;
    }
    const bytes = new Uint8Array(length);
    let at = 0;
    for (let f = 0; f < keys.length; f++) {
      const key = keys[f] as Uint8Array;
      bytes.set(key, at);
      at += key.length;
      const starts = this.valueOffsets[f] as Uint32Array;
      const value = this.recordValues[offset + f] as number;
      const start = starts[value] as number;
      const end = (starts[value + 1] as number) - 1;
      bytes.set((this.values[f] as Uint8Array).subarray(start, end), at);
      at += end - start;
    }
    bytes[at] = 0x7d; // }
    return bytes;
  }
}

const MEMBERS_CACHE_LIMIT = 200_000;
/** The sources table's columns every file of DATA_FORMAT has (`signal` came later: see layout.ts). */
const SOURCE_COLUMNS = ["name", "origin", "version", "built_at", "license", "attribution", "url", "format", "fields", "rows_v4", "rows_v6", "ranges_v4", "ranges_v6"];
const membersEncoder = new TextEncoder();

/**
 * The prefix table in front of a family's search: entry p is the index of the last
 * segment starting at or below the first address whose top 16 bits are p, and entry
 * 65536 the last segment. An address with top bits p lies in a segment between entries
 * p and p + 1, so its search covers the few segments there instead of the whole table:
 * two or three reads of memory that is likely cached instead of some twenty scattered.
 *
 * Built in one walk over the sorted starts (`words` 32-bit words each, the first 0), as
 * the prefixes ascend: a search for each of the 65,536 prefixes cost more than the rest
 * of loading a small data file, and a good part of loading the default one.
 */
function prefixTable(starts: Uint32Array, words: 1 | 4): Uint32Array {
  const segments = starts.length / words;
  const table = new Uint32Array(new SharedArrayBuffer(PREFIXES * 4 + 4));
  let last = 0;
  for (let prefix = 0; prefix < PREFIXES; prefix++) {
    const first = prefix * 0x10000;
    while (last + 1 < segments && startsAtOrBelow(starts, (last + 1) * words, words, first)) last++;
    table[prefix] = last;
  }
  table[PREFIXES] = segments - 1;
  return table;
}

/** Whether the start at `offset` is at or below the address whose first word is `top` and whose other words are 0. */
function startsAtOrBelow(starts: Uint32Array, offset: number, words: 1 | 4, top: number): boolean {
  const first = starts[offset] as number;
  if (first !== top) return first < top;
  for (let w = 1; w < words; w++) if (starts[offset + w] !== 0) return false;
  return true;
}

const PREFIXES = 0x10000;

/** A prefix with more IPv6 segments than this gets a second level (see denseTable). */
const DENSE_SEGMENTS = 64;

/**
 * The second level in front of IPv6 searches. Most IPv6 data lies in a few dozen /16
 * prefixes (51 in the default data, most with thousands of segments, up to 65,000),
 * where the prefix table still leaves a search of 11 to 16 steps, each a read of memory
 * unlikely to be cached. For such a dense prefix p, entry p is where its second level
 * starts in this same array: 256 entries, one per value of the address's next 8 bits,
 * each the index of the last segment starting at or below that /24's first address,
 * then the prefix table's entry p + 1. Entry p is 0 for the other prefixes (a second
 * level never starts at 0: the first 65,536 entries come first). A search between two
 * neighbouring second-level entries takes about 8 steps fewer: the bench's IPv6 lookups
 * took 0.73–0.88 of their time without it (paired runs in process). The table costs
 * 256 KiB and 1 KiB a dense prefix.
 */
function denseTable(starts: Uint32Array, prefixes: Uint32Array): Uint32Array {
  const dense: number[] = [];
  for (let prefix = 0; prefix < PREFIXES; prefix++) {
    if ((prefixes[prefix + 1] as number) - (prefixes[prefix] as number) > DENSE_SEGMENTS) dense.push(prefix);
  }
  const table = new Uint32Array(new SharedArrayBuffer((PREFIXES + dense.length * 257) * 4));
  let at = PREFIXES;
  for (const prefix of dense) {
    table[prefix] = at;
    // One walk over the prefix's segments, as in prefixTable.
    const high = prefixes[prefix + 1] as number;
    let last = prefixes[prefix] as number;
    for (let next = 0; next < 256; next++) {
      const first = ((prefix << 16) | (next << 8)) >>> 0;
      while (last < high && startsAtOrBelow(starts, (last + 1) * 4, 4, first)) last++;
      table[at + next] = last;
    }
    table[at + 256] = high;
    at += 257;
  }
  return table;
}

/** A copy of `bytes` in a SharedArrayBuffer of its own. */
function shared(bytes: Uint8Array): Uint8Array {
  const copy = new Uint8Array(new SharedArrayBuffer(bytes.byteLength));
  copy.set(bytes);
  return copy;
}

/**
 * Where each value of a field's newline-separated values starts, and, last, the length
 * plus one: value i is `bytes[starts[i], starts[i + 1] - 1)`. JSON texts never hold a raw
 * newline, so every newline separates two values. An empty table is no values (a data
 * set of no records), not one empty one.
 */
function valueStarts(bytes: Uint8Array): Uint32Array {
  if (bytes.length === 0) return new Uint32Array(new SharedArrayBuffer(4)).fill(1);
  let count = 1;
  for (let i = bytes.indexOf(0x0a); i !== -1; i = bytes.indexOf(0x0a, i + 1)) count++;
  const starts = new Uint32Array(new SharedArrayBuffer((count + 1) * 4));
  let n = 1;
  for (let i = bytes.indexOf(0x0a); i !== -1; i = bytes.indexOf(0x0a, i + 1)) starts[n++] = i + 1;
  starts[n] = bytes.length + 1;
  return starts;
}

/** A source's signal column: a signal's name, or "" (or no column, in files from before signals) for none. */
function signalOf(value: unknown): Signal | null {
  if (value === undefined || value === null || value === "") return null;
  if (typeof value !== "string" || !isSignal(value)) throw new Error(`the data file names a signal iplookup does not know: ${JSON.stringify(value)}`);
  return value;
}

/** The record values of a file from before signals with a `privacy` column added, every record at value 0. */
function withPrivacyColumn(fields: readonly RecordField[], recordValues: Uint32Array): { fields: RecordField[]; recordValues: Uint32Array } {
  const width = fields.length;
  const records = recordValues.length / width;
  const widened = new Uint32Array(new SharedArrayBuffer(records * (width + 1) * 4));
  for (let r = 0; r < records; r++) widened.set(recordValues.subarray(r * width, r * width + width), r * (width + 1));
  return { fields: [...fields, "privacy"], recordValues: widened };
}

/** The hosting list's AS numbers, ascending, from its meta row; null without one. */
function hostingAsnsOf(text: string | undefined): Uint32Array | null {
  if (text === undefined) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw damaged("its hosting list cannot be read");
  }
  if (!Array.isArray(parsed) || !parsed.every((entry) => Array.isArray(entry) && Number.isInteger(entry[0]) && entry[0] >= 0 && entry[0] <= 0xffffffff)) {
    throw damaged("its hosting list cannot be read");
  }
  const list = new Uint32Array(new SharedArrayBuffer(parsed.length * 4));
  parsed.forEach((entry, i) => (list[i] = (entry as [number])[0]));
  return list.sort();
}

/**
 * Checks a family's segment table against what the layout promises (data-file/layout.ts,
 * importer/merge.ts): the first segment starts at address 0, each starts after the one
 * before (so the segments partition the space and a search finds the one holding an
 * address), each has a record id of 0 (not found) to `recordCount`, and neighbours
 * differ in record (a segment is a maximal run of one answer, which a result's network
 * is the largest CIDR block of). Throws naming the first segment that breaks one. One
 * pass over the tables.
 */
function checkSegments(family: 4 | 6, starts: Uint32Array, records: Uint32Array, recordCount: number): void {
  const { starts: startsName, records: recordsName } = SEGMENT_BLOBS[family];
  const words = family === 4 ? 1 : 4;
  for (let w = 0; w < words; w++) if (starts[w] !== 0) throw damaged(`its ${startsName} table does not start at address 0`);
  let previous = records[0] as number;
  if (previous > recordCount) throw damaged(`its ${recordsName} table gives segment 0 record ${previous}, past its ${recordCount} records`);
  for (let i = 1; i < records.length; i++) {
    const record = records[i] as number;
    if (record > recordCount) throw damaged(`its ${recordsName} table gives segment ${i} record ${record}, past its ${recordCount} records`);
    if (record === previous) throw damaged(`its ${recordsName} table gives segments ${i - 1} and ${i} the same record`);
    previous = record;
    if (!startsAfter(starts, i * words, words)) throw damaged(`its ${startsName} table does not ascend at segment ${i}`);
  }
}

/** Whether the start at `offset` (`words` 32-bit words, most significant first) is above the one before it. */
function startsAfter(starts: Uint32Array, offset: number, words: 1 | 4): boolean {
  for (let w = 0; w < words; w++) {
    const a = starts[offset + w] as number;
    const b = starts[offset - words + w] as number;
    if (a !== b) return a > b;
  }
  return false;
}

function parseFields(text: string | undefined): RecordField[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text ?? "");
  } catch {
    throw damaged("its field list cannot be read");
  }
  if (!Array.isArray(parsed) || !parsed.every((field) => typeof field === "string" && isRecordField(field))) {
    throw new Error("the data file names fields iplookup does not know");
  }
  return parsed as RecordField[];
}

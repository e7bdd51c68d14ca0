import * as decoderModule from "mmdb-lib/lib/decoder";
import { parseMetadata, type Metadata } from "mmdb-lib/lib/metadata";
import * as walkerModule from "mmdb-lib/lib/reader/walker";

// mmdb-lib's modules are CommonJS with `exports.default`: Bun at run time hands that
// to a default import, the bundle in the compiled binary hands over the whole module.
// Taking `.default` from the namespace works in both.
const Decoder = cjsDefault(decoderModule) as typeof decoderModule.default;
const walker = cjsDefault(walkerModule) as typeof walkerModule.default;

function cjsDefault(module: { default: unknown }): unknown {
  const value = module.default as { default?: unknown } | undefined;
  return typeof value === "function" ? value : value?.default;
}

const METADATA_MARKER = Buffer.from("\xAB\xCD\xEFMaxMind.com", "latin1");
/** The metadata section sits in the last 128 KiB of a file (MaxMind DB spec). */
const METADATA_MAX_SIZE = 128 * 1024;
const DATA_SECTION_SEPARATOR_SIZE = 16;

/**
 * An MMDB file opened for walking: its metadata checked, and readers for the search
 * tree's records and the data section that check bounds before they read. Errors are
 * plain reasons; the caller adds the file name.
 */
export interface MmdbFile {
  readonly metadata: Metadata;
  readonly bytes: Uint8Array;
  readonly recordSize: 24 | 28 | 32;
  readonly nodeCount: number;
  readonly nodeByteSize: number;
  /** The left and right record of the node at this byte offset (mmdb-lib's walker). */
  readonly left: (offset: number) => number;
  readonly right: (offset: number) => number;
  /** Decodes the data a record > nodeCount points to. */
  readonly decode: (record: number) => unknown;
}

export function openMmdb(bytes: Uint8Array): MmdbFile {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tailStart = Math.max(0, buffer.length - METADATA_MAX_SIZE);
  const found = buffer.subarray(tailStart).lastIndexOf(METADATA_MARKER);
  if (found < 0) throw new Error("not a MaxMind DB file (no metadata marker; a file cut short loses it)");
  const dataEnd = tailStart + found;

  let metadata: Metadata;
  try {
    metadata = parseMetadata(buffer);
  } catch (error) {
    throw new Error(`truncated or damaged: the metadata cannot be read (${(error as Error).message})`);
  }
  const { binaryFormatMajorVersion, recordSize, nodeCount, ipVersion } = metadata;
  const missing = Object.entries({ binary_format_major_version: binaryFormatMajorVersion, record_size: recordSize, node_count: nodeCount, ip_version: ipVersion })
    .filter(([, value]) => typeof value !== "number")
    .map(([key]) => key);
  if (missing.length > 0) throw new Error(`truncated or damaged: the metadata has no ${missing.join(", ")}`);
  if (binaryFormatMajorVersion !== 2) throw new Error(`binary format major version ${String(binaryFormatMajorVersion)} is not supported (only 2)`);
  if (recordSize !== 24 && recordSize !== 28 && recordSize !== 32) throw new Error(`record size ${String(recordSize)} is not supported (24, 28 or 32)`);
  if (ipVersion !== 4 && ipVersion !== 6) throw new Error(`ip_version ${String(ipVersion)} is not 4 or 6`);
  if (!Number.isSafeInteger(nodeCount) || nodeCount < 1 || nodeCount >= 2 ** recordSize) {
    throw new Error(`truncated or damaged: node_count ${String(nodeCount)} is not a valid node count`);
  }
  const dataStart = metadata.searchTreeSize + DATA_SECTION_SEPARATOR_SIZE;
  if (dataStart > dataEnd) throw new Error(`truncated or damaged: the search tree (${metadata.searchTreeSize} bytes) runs past the metadata`);

  const tree = walker(buffer, recordSize);
  const data = buffer.subarray(0, dataEnd);
  const decoder = new Decoder(data, dataStart, pointedStrings());
  const decode = (record: number): unknown => {
    const offset = record - nodeCount - DATA_SECTION_SEPARATOR_SIZE;
    if (offset < 0 || dataStart + offset >= dataEnd) {
      throw new Error(`truncated or damaged: record ${record} points outside the data section`);
    }
    let cursor: { value: unknown; offset: number };
    try {
      cursor = decoder.decodeFast(dataStart + offset);
    } catch (error) {
      throw new Error(`truncated or damaged: the data at offset ${offset} cannot be decoded (${(error as Error).message})`);
    }
    if (!(cursor.offset <= dataEnd)) throw new Error(`truncated or damaged: the data at offset ${offset} runs past the data section`);
    return cursor.value;
  };
  return { metadata, bytes, recordSize, nodeCount, nodeByteSize: metadata.nodeByteSize, left: tree.left, right: tree.right, decode };
}

/**
 * A cache for the decoder that keeps what pointers lead to, except maps and arrays: keys
 * and repeated strings are pointers in most files, and decoding them once is a third
 * faster; records themselves are decoded once anyway and need not stay in memory.
 */
function pointedStrings(): { get(key: string | number): unknown; set(key: string | number, cursor: { value: unknown }): void } {
  const cache = new Map<string | number, unknown>();
  return {
    get: (key) => cache.get(key),
    set: (key, cursor) => {
      if (typeof cursor.value !== "object") cache.set(key, cursor);
    },
  };
}

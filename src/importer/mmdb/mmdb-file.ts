import { DataDecoder, DecodeLimitError } from "./data-decoder.ts";
import { leftRecord, rightRecord } from "./node-records.ts";

const METADATA_MARKER = Buffer.from("\xAB\xCD\xEFMaxMind.com", "latin1");
/** The metadata section sits in the last 128 KiB of a file (MaxMind DB spec). */
const METADATA_MAX_SIZE = 128 * 1024;
const DATA_SECTION_SEPARATOR_SIZE = 16;

/** What the importer uses of an MMDB file's metadata (MaxMind DB spec names in comments). */
export interface MmdbMetadata {
  readonly binaryFormatMajorVersion: unknown; // binary_format_major_version
  readonly ipVersion: unknown; // ip_version
  readonly recordSize: unknown; // record_size
  readonly nodeCount: unknown; // node_count
  readonly databaseType: unknown; // database_type
  readonly description: unknown; // description: language → text
  /** build_epoch as a Date (invalid when there is none). */
  readonly buildEpoch: Date;
}

/**
 * An MMDB file opened for walking: its metadata checked, and readers for the search
 * tree's records and the data section that check bounds before they read. Errors are
 * plain reasons; the caller adds the file name.
 */
export interface MmdbFile {
  readonly metadata: MmdbMetadata & { readonly ipVersion: 4 | 6 };
  readonly bytes: Uint8Array;
  readonly recordSize: 24 | 28 | 32;
  readonly nodeCount: number;
  readonly nodeByteSize: number;
  /** The left and right record of the node at this byte offset. */
  readonly left: (offset: number) => number;
  readonly right: (offset: number) => number;
  /** Decodes the data a record > nodeCount points to (bounded: see data-decoder.ts). */
  readonly decode: (record: number) => unknown;
}

export function openMmdb(bytes: Uint8Array): MmdbFile {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tailStart = Math.max(0, buffer.length - METADATA_MAX_SIZE);
  const found = buffer.subarray(tailStart).lastIndexOf(METADATA_MARKER);
  if (found < 0) throw new Error("not a MaxMind DB file (no metadata marker; a file cut short loses it)");
  const dataEnd = tailStart + found;

  const metadata = readMetadata(bytes, dataEnd + METADATA_MARKER.length);
  const { binaryFormatMajorVersion, recordSize, nodeCount, ipVersion } = metadata;
  const missing = Object.entries({ binary_format_major_version: binaryFormatMajorVersion, record_size: recordSize, node_count: nodeCount, ip_version: ipVersion })
    .filter(([, value]) => typeof value !== "number")
    .map(([key]) => key);
  if (missing.length > 0) throw new Error(`truncated or damaged: the metadata has no ${missing.join(", ")}`);
  if (binaryFormatMajorVersion !== 2) throw new Error(`binary format major version ${String(binaryFormatMajorVersion)} is not supported (only 2)`);
  if (recordSize !== 24 && recordSize !== 28 && recordSize !== 32) throw new Error(`record size ${String(recordSize)} is not supported (24, 28 or 32)`);
  if (ipVersion !== 4 && ipVersion !== 6) throw new Error(`ip_version ${String(ipVersion)} is not 4 or 6`);
  if (typeof nodeCount !== "number" || !Number.isSafeInteger(nodeCount) || nodeCount < 1 || nodeCount >= 2 ** recordSize) {
    throw new Error(`truncated or damaged: node_count ${String(nodeCount)} is not a valid node count`);
  }
  const nodeByteSize = recordSize / 4;
  const searchTreeSize = nodeCount * nodeByteSize;
  const dataStart = searchTreeSize + DATA_SECTION_SEPARATOR_SIZE;
  if (dataStart > dataEnd) throw new Error(`truncated or damaged: the search tree (${searchTreeSize} bytes) runs past the metadata`);

  const decoder = new DataDecoder(bytes, dataStart, dataEnd, "the data section");
  const decode = (record: number): unknown => {
    const offset = record - nodeCount - DATA_SECTION_SEPARATOR_SIZE;
    if (offset < 0 || dataStart + offset >= dataEnd) {
      throw new Error(`truncated or damaged: record ${record} points outside the data section`);
    }
    try {
      return decoder.decode(offset);
    } catch (error) {
      if (error instanceof DecodeLimitError) throw new Error(`the data at offset ${offset} ${error.message}`);
      throw new Error(`truncated or damaged: the data at offset ${offset} ${(error as Error).message}`);
    }
  };
  return {
    metadata: { ...metadata, ipVersion },
    bytes,
    recordSize,
    nodeCount,
    nodeByteSize,
    left: (offset) => leftRecord(bytes, recordSize, offset),
    right: (offset) => rightRecord(bytes, recordSize, offset),
    decode,
  };
}

/** The metadata map that starts at `start` and runs to the end of the file. */
function readMetadata(bytes: Uint8Array, start: number): MmdbMetadata {
  let map: unknown;
  try {
    map = new DataDecoder(bytes, start, bytes.byteLength, "the metadata").decode(0);
  } catch (error) {
    throw new Error(`truncated or damaged: the metadata cannot be read (it ${(error as Error).message})`);
  }
  const raw = (typeof map === "object" && map !== null && !Array.isArray(map) ? map : {}) as Record<string, unknown>;
  const epoch = raw.build_epoch;
  return {
    binaryFormatMajorVersion: raw.binary_format_major_version,
    ipVersion: raw.ip_version,
    recordSize: raw.record_size,
    nodeCount: raw.node_count,
    databaseType: raw.database_type,
    description: raw.description,
    buildEpoch: new Date(typeof epoch === "number" || typeof epoch === "bigint" ? Number(epoch) * 1000 : NaN),
  };
}

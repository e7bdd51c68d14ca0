import { inFieldOrder, type RecordField } from "../../index/record-fields.ts";
import { unpackPart, type PackedPart } from "../join-parts.ts";
import type { SourceData } from "../source-data.ts";
import { completeValues } from "./complete-values.ts";
import { MMDB_KEYS_READ } from "./mmdb-fields.ts";
import { openMmdb, type MmdbFile } from "./mmdb-file.ts";
import { RangeCollector } from "./range-collector.ts";
import { TreeWalker } from "./tree-walker.ts";

/**
 * Reads a MaxMind DB file into packed ranges: every leaf of its search tree becomes a
 * range with the mapped value (see fieldValuesOf), neighbours with equal values merged.
 *
 * An IPv4 database (ip_version 4) fills the v4 layer. In an IPv6 database IPv4 is the
 * ::/96 subtree; it fills the v4 layer, and the v6 layer has the rest of the tree without
 * it and without the records that alias it elsewhere (::ffff:0:0/96, 2001::/32,
 * 2002::/16 point to the same node in MaxMind's databases).
 *
 * A file that is not an MMDB, is damaged or truncated, has no data, or whose records
 * hold nothing iplookup reads (a layout fieldValuesOf does not map, such as GeoIP2
 * Anonymous IP: it would answer every address found, every field null) is refused with
 * an Error naming `file`; nothing is returned in part. `progress` is told the nodes visited
 * now and then, out of the tree's node count.
 */
export function readMmdbPacked(bytes: Uint8Array, file: string, progress?: (done: number, total: number) => void): PackedPart {
  try {
    return read(openMmdb(bytes), progress);
  } catch (error) {
    throw new Error(`${file}: ${(error as Error).message}`);
  }
}

/** readMmdbPacked, with the ranges as ValueRange objects. */
export function readMmdb(bytes: Uint8Array, file: string, progress?: (done: number, total: number) => void): SourceData {
  return unpackPart(readMmdbPacked(bytes, file, progress));
}

function read(mmdb: MmdbFile, progress?: (done: number, total: number) => void): PackedPart {
  const { metadata, nodeCount } = mmdb;
  const walker = new TreeWalker(mmdb, progress);
  const v4 = new RangeCollector(1);
  const v6 = new RangeCollector(4);
  if (metadata.ipVersion === 4) {
    walker.walk(0, 96, v4);
  } else {
    const { record, length } = ipv4Start(mmdb);
    if (record < nodeCount) {
      walker.walk(record, 96, v4);
      walker.walk(0, 0, v6, record);
    } else if (record === nodeCount) {
      walker.walk(0, 0, v6);
    } else {
      v4.leaf(walker.valueId(record), new Uint32Array(4), 96);
      v4.finish();
      walker.walk(0, 0, v6, -1, { record, length });
    }
  }
  progress?.(walker.visited, nodeCount);

  const fields = inFieldOrder(walker.table.values.flatMap((value) => Object.keys(value) as RecordField[]));
  if (v4.length === 0 && v6.length === 0) throw new Error("the search tree has no data");
  if (fields.length === 0) throw new Error(`its records (${databaseTypeText(metadata)}) hold none of the keys iplookup reads: ${MMDB_KEYS_READ}; refused`);
  const completed = completeValues(fields, walker.table.values, [v4.layer(), v6.layer()]);
  return {
    fields,
    values: completed.values,
    rows: { 4: v4.rows, 6: v6.rows },
    4: completed.layers[0]!,
    6: completed.layers[1]!,
    described: described(metadata),
  };
}

/**
 * Where IPv4 starts in an IPv6 tree: the record reached by following 96 left records
 * from the root, or the first one before that which is not a node (then `length` is its
 * prefix length and it covers all of IPv4, or nothing if it is empty).
 */
function ipv4Start(mmdb: MmdbFile): { record: number; length: number } {
  let record = 0;
  let length = 0;
  while (length < 96 && record < mmdb.nodeCount) {
    record = mmdb.left(record * mmdb.nodeByteSize);
    length++;
  }
  return { record, length };
}

/** The file's database type as a message names it. */
function databaseTypeText(metadata: MmdbFile["metadata"]): string {
  const type = metadata.databaseType;
  return typeof type === "string" && type !== "" ? `database type ${JSON.stringify(type.slice(0, 100))}` : "no database type given";
}

function described(metadata: MmdbFile["metadata"]): { name?: string; builtAt?: string } {
  const result: { name?: string; builtAt?: string } = {};
  const type = typeof metadata.databaseType === "string" ? metadata.databaseType : "";
  const description: unknown = (metadata.description as unknown as Record<string, unknown> | undefined)?.en;
  const english = typeof description === "string" ? description : "";
  const name = type && english && english !== type ? `${type} (${english})` : type || english;
  if (name) result.name = name;
  const time = metadata.buildEpoch instanceof Date ? metadata.buildEpoch.getTime() : NaN;
  if (Number.isFinite(time)) result.builtAt = new Date(time).toISOString();
  return result;
}

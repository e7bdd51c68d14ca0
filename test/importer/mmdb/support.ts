import { writeAddress } from "../../../src/data-file/packed-address.ts";
import type { FieldValues, RecordField } from "../../../src/index/record-fields.ts";
import { compareAddresses, followsDirectly, type PackedLayer, wordsOf } from "../../../src/importer/packed-layer.ts";
import type { Family, ValueRange } from "../../../src/importer/ranges.ts";
import type { SourceData, SourceLayer } from "../../../src/importer/source-data.ts";
import { parseIPv6 } from "../../support/mmdb-writer.ts";

/** An address from text: dotted IPv4 or IPv6 (no embedded IPv4). */
export function address(text: string): bigint {
  if (text.includes(":")) return parseIPv6(text);
  return text.split(".").reduce((sum, octet) => (sum << 8n) | BigInt(Number(octet)), 0n);
}

export function ipv4Text(value: bigint): string {
  return [24n, 16n, 8n, 0n].map((shift) => Number((value >> shift) & 0xffn)).join(".");
}

/** Eight hex groups, which mmdb-lib's parser reads. */
export function ipv6Text(value: bigint): string {
  const groups: string[] = [];
  for (let shift = 112n; shift >= 0n; shift -= 16n) groups.push(((value >> shift) & 0xffffn).toString(16));
  return groups.join(":");
}

/** The range holding `at`, by binary search; undefined where there is none. */
export function rangeAt(ranges: readonly ValueRange<number>[], at: bigint): ValueRange<number> | undefined {
  let low = 0;
  let high = ranges.length - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const range = ranges[middle]!;
    if (at < range.start) high = middle - 1;
    else if (at > range.end) low = middle + 1;
    else return range;
  }
  return undefined;
}

/** The ranges of a layer as texts and values, for exact comparisons. */
export function listed(data: SourceData, layer: SourceLayer, family: 4 | 6): Array<[string, string, FieldValues]> {
  const text = family === 4 ? ipv4Text : ipv6Text;
  return layer.ranges.map((range) => [text(range.start), text(range.end), data.values[range.value]!]);
}

/** The value of the range holding an address, or undefined. */
export function valueAt(data: SourceData, layer: SourceLayer, at: bigint): FieldValues | undefined {
  const range = rangeAt(layer.ranges, at);
  return range && data.values[range.value];
}

/** Every field of `fields`, null where `values` has none (what readMmdb gives each value). */
export function completed(values: FieldValues, fields: readonly RecordField[]): FieldValues {
  const result: FieldValues = {};
  for (const field of fields) result[field] = values[field] ?? null;
  return result;
}

/** Ranges must be sorted, disjoint and non-empty, and neighbours that touch must differ. */
export function checkWellFormed(layer: SourceLayer, max: bigint): string[] {
  const problems: string[] = [];
  layer.ranges.forEach((range, i) => {
    if (range.end < range.start || range.start < 0n || range.end > max) problems.push(`range ${i} is out of order or bounds`);
    const before = layer.ranges[i - 1];
    if (before && before.end >= range.start) problems.push(`range ${i} overlaps the one before`);
    if (before && before.end + 1n === range.start && before.value === range.value) problems.push(`range ${i} should have merged`);
  });
  return problems;
}

/**
 * checkWellFormed on a packed layer, word by word, without a BigInt per range (a city
 * layer has millions of ranges). Bounds: the layer has the family's word count and arrays
 * of its length (a u32 word cannot leave the family's address space), and every value is
 * an index into the `valueCount` values of its part. The first ten problems.
 */
export function checkPackedWellFormed(layer: PackedLayer, family: Family, valueCount: number): string[] {
  const { words, length, starts, ends, values } = layer;
  if (words !== wordsOf(family) || starts.length !== length * words || ends.length !== length * words || values.length !== length) {
    return [`the layer's arrays do not hold ${length} IPv${family} ranges`];
  }
  const problems: string[] = [];
  for (let i = 0; i < length && problems.length < 10; i++) {
    const at = i * words;
    const value = values[i] as number;
    if (compareAddresses(ends, at, starts, at, words) < 0 || value < 0 || value >= valueCount) problems.push(`range ${i} is out of order or bounds`);
    if (i === 0) continue;
    const before = at - words;
    if (compareAddresses(ends, before, starts, at, words) >= 0) problems.push(`range ${i} overlaps the one before`);
    else if (followsDirectly(ends, before, starts, at, words) && values[i - 1] === value) problems.push(`range ${i} should have merged`);
  }
  return problems;
}

const AT = new Uint32Array(4);

/** The index of the packed range holding `at`, by binary search; -1 where there is none. */
export function packedRangeAt(layer: PackedLayer, at: bigint): number {
  const { words, starts, ends } = layer;
  writeAddress(at, words, AT, 0);
  let low = 0;
  let high = layer.length - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    if (compareAddresses(AT, 0, starts, middle * words, words) < 0) high = middle - 1;
    else if (compareAddresses(AT, 0, ends, middle * words, words) > 0) low = middle + 1;
    else return middle;
  }
  return -1;
}

/** A small deterministic random generator (mulberry32). */
export function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

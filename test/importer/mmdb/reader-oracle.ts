import { Reader } from "mmdb-lib";
import { readAddress } from "../../../src/data-file/packed-address.ts";
import type { FieldValues } from "../../../src/index/record-fields.ts";
import type { PackedPart } from "../../../src/importer/join-parts.ts";
import { fieldValuesOf } from "../../../src/importer/mmdb/mmdb-fields.ts";
import type { PackedLayer } from "../../../src/importer/packed-layer.ts";
import { completed, ipv4Text, ipv6Text, packedRangeAt, random } from "./support.ts";

export interface OracleCheck {
  readonly checked4: number;
  readonly checked6: number;
  /** Addresses where readMmdb and mmdb-lib disagree (the first few). */
  readonly mismatches: string[];
}

/**
 * Looks addresses up with mmdb-lib's own Reader and in readMmdbPacked's ranges:
 * `randomCount` random addresses per family, and the start, end, one before and one past
 * of `sampledRanges` ranges per layer. The record the Reader finds, mapped by
 * fieldValuesOf, must be the value of the range holding the address; no record, no range.
 * In an IPv6 file, IPv6 addresses below 2^32 are IPv4's (::/96) and are checked against
 * the v4 layer. Ranges are searched in their packed words: a city file's millions of ranges
 * are never turned into objects (only the addresses checked are BigInts).
 */
export function compareWithReader(bytes: Uint8Array, part: PackedPart, randomCount: number, sampledRanges: number, seed = 1): OracleCheck {
  const reader = new Reader(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  const next = random(seed);
  const word = () => BigInt(Math.floor(next() * 2 ** 32));
  const mismatches: string[] = [];
  let checked4 = 0;
  let checked6 = 0;

  const check = (text: string, layer: PackedLayer, at: bigint) => {
    const record = reader.get(text);
    const expected = record === null ? undefined : completed(fieldValuesOf(record), part.fields);
    const index = packedRangeAt(layer, at);
    const actual: FieldValues | undefined = index < 0 ? undefined : part.values[layer.values[index] as number];
    if (!Bun.deepEquals(actual, expected)) mismatches.push(`${text}: mmdb-lib ${JSON.stringify(expected)}, ours ${JSON.stringify(actual)}`);
  };

  const v4: bigint[] = edges(part[4], sampledRanges, next, 0xffffffffn);
  for (let i = 0; i < randomCount; i++) v4.push(word());
  for (const at of v4) {
    check(ipv4Text(at), part[4], at);
    checked4++;
  }

  if (reader.metadata.ipVersion === 6) {
    const max = (1n << 128n) - 1n;
    const v6: bigint[] = edges(part[6], sampledRanges, next, max);
    for (let i = 0; i < randomCount; i++) {
      const any = (word() << 96n) | (word() << 64n) | (word() << 32n) | word();
      // mostly global unicast (2000::/3), where the data is; some anywhere, in ::/64, in ::/96
      const kind = i % 8;
      v6.push(kind === 0 ? any : kind === 1 ? any & 0xffffffffffffffffn : kind === 2 ? word() : (any & ((1n << 125n) - 1n)) | (1n << 125n));
    }
    for (const at of v6) {
      if (at < 1n << 32n) check(ipv6Text(at), part[4], at);
      else check(ipv6Text(at), part[6], at);
      checked6++;
    }
  }
  return { checked4, checked6, mismatches: mismatches.slice(0, 10) };
}

/** Start, end, one before and one past of some ranges: the first, the last and random ones. */
function edges(layer: PackedLayer, count: number, next: () => number, max: bigint): bigint[] {
  const result: bigint[] = [];
  const { length, words } = layer;
  if (length === 0) return result;
  const picks = [0, length - 1, ...Array.from({ length: count }, () => Math.floor(next() * length))];
  for (const index of picks) {
    const start = readAddress(layer.starts, words, index * words);
    const end = readAddress(layer.ends, words, index * words);
    result.push(start, end);
    if (start > 0n) result.push(start - 1n);
    if (end < max) result.push(end + 1n);
  }
  return result;
}

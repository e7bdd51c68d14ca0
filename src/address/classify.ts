import type { Address } from "./address.ts";
import {
  IPV4_MULTICAST,
  IPV4_SPECIAL_BLOCKS,
  IPV6_MULTICAST,
  IPV6_OUTSIDE_GLOBAL_UNICAST_REASON,
  IPV6_SPECIAL_BLOCKS,
  type SpecialBlock,
} from "./special-purpose.ts";
import { blockBounds } from "./block-bounds.ts";
import { lastStartAtOrBelow128, lastStartAtOrBelow32 } from "./sorted-search.ts";

/**
 * Why an address is not public, or null when it is: a globally reachable unicast
 * address (CONTRACT §2).
 */
export function classifyAddress(address: Address): string | null {
  if (address.version === 4) return IPV4_TABLE.reasons[lastStartAtOrBelow32(IPV4_TABLE.starts, address.value)] ?? null;
  return IPV6_TABLE.reasons[lastStartAtOrBelow128(IPV6_TABLE.starts, address.words)] ?? null;
}

/**
 * The registries flattened into disjoint intervals that cover the whole space, each
 * with its answer (undefined = public). Built once at load by painting blocks from the
 * least to the most specific, so the most specific block decides: a globally reachable
 * block inside an unreachable one is public, an N/A block keeps the answer around it,
 * and the reason is that of the most specific block.
 */
interface Interval {
  start: bigint;
  end: bigint;
  isPublic: boolean;
  reason: string;
  /** Space that is never public whatever a registry block inside it says. */
  forced: boolean;
}

function paint(intervals: Interval[], start: bigint, end: bigint, change: (interval: Interval) => Interval): Interval[] {
  const result: Interval[] = [];
  for (const interval of intervals) {
    if (interval.end < start || interval.start > end) {
      result.push(interval);
      continue;
    }
    if (interval.start < start) result.push({ ...interval, end: start - 1n });
    const from = interval.start > start ? interval.start : start;
    const to = interval.end < end ? interval.end : end;
    result.push(change({ ...interval, start: from, end: to }));
    if (interval.end > end) result.push({ ...interval, start: end + 1n });
  }
  return result;
}

function buildIntervals(bits: 32 | 128, base: Array<{ cidr: string; reason: string }>, blocks: readonly SpecialBlock[]): Interval[] {
  const max = (1n << BigInt(bits)) - 1n;
  let intervals: Interval[] = [{ start: 0n, end: max, isPublic: true, reason: "", forced: false }];
  for (const { cidr, reason } of base) {
    const [start, end] = blockBounds(cidr);
    intervals = paint(intervals, start, end, (interval) => ({ ...interval, isPublic: false, reason, forced: true }));
  }
  const bySpecificity = [...blocks].sort((a, b) => prefixOf(a.cidr) - prefixOf(b.cidr));
  for (const block of bySpecificity) {
    const [start, end] = blockBounds(block.cidr);
    intervals = paint(intervals, start, end, (interval) => ({
      ...interval,
      isPublic: block.reachable ?? interval.isPublic,
      reason: block.reason,
    }));
  }
  return intervals;
}

function prefixOf(cidr: string): number {
  return Number(cidr.slice(cidr.indexOf("/") + 1));
}

interface Table<S> {
  starts: S;
  reasons: Array<string | undefined>;
}

function answers(intervals: Interval[]): Array<string | undefined> {
  return intervals.map((interval) => (interval.isPublic && !interval.forced ? undefined : interval.reason));
}

const IPV4_INTERVALS = buildIntervals(32, [IPV4_MULTICAST], IPV4_SPECIAL_BLOCKS);
const IPV4_TABLE: Table<Uint32Array> = {
  starts: Uint32Array.from(IPV4_INTERVALS, (interval) => Number(interval.start)),
  reasons: answers(IPV4_INTERVALS),
};

// Everything outside 2000::/3 (global unicast) is these three blocks.
const IPV6_OUTSIDE = ["::/3", "4000::/2", "8000::/1"].map((cidr) => ({ cidr, reason: IPV6_OUTSIDE_GLOBAL_UNICAST_REASON }));
const IPV6_INTERVALS = buildIntervals(128, [...IPV6_OUTSIDE, IPV6_MULTICAST], IPV6_SPECIAL_BLOCKS);
const IPV6_TABLE: Table<Uint32Array> = {
  starts: (() => {
    const words = new Uint32Array(IPV6_INTERVALS.length * 4);
    IPV6_INTERVALS.forEach((interval, i) => {
      for (let w = 0; w < 4; w++) words[i * 4 + w] = Number((interval.start >> BigInt(96 - 32 * w)) & 0xffffffffn);
    });
    return words;
  })(),
  reasons: answers(IPV6_INTERVALS),
};

/** The public ranges of each family, adjacent ones joined, as [first, last] pairs in address order. */
const PUBLIC_RANGES: Record<32 | 128, readonly (readonly [bigint, bigint])[]> = {
  32: publicRangesOf(IPV4_INTERVALS),
  128: publicRangesOf(IPV6_INTERVALS),
};

function publicRangesOf(intervals: readonly Interval[]): [bigint, bigint][] {
  const ranges: [bigint, bigint][] = [];
  for (const interval of intervals) {
    if (!interval.isPublic || interval.forced) continue;
    const last = ranges[ranges.length - 1];
    if (last && last[1] + 1n === interval.start) last[1] = interval.end;
    else ranges.push([interval.start, interval.end]);
  }
  return ranges;
}

/**
 * The public parts of the addresses `first`…`last` (CONTRACT §2), in address order: what
 * lookups answer of that span. Most spans are public whole; the AS answers ask this for
 * every run of an AS's addresses, so that their prefixes and counts hold only addresses
 * whose lookup answers the AS.
 */
export function publicParts(bits: 32 | 128, first: bigint, last: bigint): [bigint, bigint][] {
  const ranges = PUBLIC_RANGES[bits];
  // The first range that ends at or after `first`.
  let low = 0;
  let high = ranges.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((ranges[middle] as readonly [bigint, bigint])[1] < first) low = middle + 1;
    else high = middle;
  }
  const parts: [bigint, bigint][] = [];
  for (let i = low; i < ranges.length; i++) {
    const [start, end] = ranges[i] as readonly [bigint, bigint];
    if (start > last) break;
    parts.push([start > first ? start : first, end < last ? end : last]);
  }
  return parts;
}

/**
 * A quick test before publicParts, for spans asked in address order (a data set's
 * segments, an AS's runs): true when every IPv4 address from `first` up to, not
 * including, `end` (2^32 allowed) lies in one public interval of the registry table.
 * False says only "ask publicParts": a span may be public across two intervals
 * (192.0.0.9 and 192.0.0.10 are two blocks). It walks the intervals once, alongside.
 */
export function publicSpans4(): (first: number, end: number) => boolean {
  const { starts, reasons } = IPV4_TABLE;
  let i = 0;
  return (first, end) => {
    while (i + 1 < starts.length && (starts[i + 1] as number) <= first) i++;
    if (reasons[i] !== undefined) return false;
    return i + 1 >= starts.length || (starts[i + 1] as number) >= end;
  };
}

/**
 * publicSpans4 for IPv6, the span's first address and its end given as four words each
 * at `words[at…]` and `words[endAt…]` (an `endAt` of -1: to the end of the space), so
 * that no BigInt is made for the spans that are public whole.
 */
export function publicSpans6(): (words: Uint32Array, at: number, endAt: number) => boolean {
  const { starts, reasons } = IPV6_TABLE;
  const count = starts.length / 4;
  let i = 0;
  /** How interval `k`'s start compares with the address at `words[offset…]`: -1, 0 or 1. */
  const compare = (k: number, words: Uint32Array, offset: number): number => {
    for (let w = 0; w < 4; w++) {
      const a = starts[k * 4 + w] as number;
      const b = words[offset + w] as number;
      if (a !== b) return a < b ? -1 : 1;
    }
    return 0;
  };
  return (words, at, endAt) => {
    while (i + 1 < count && compare(i + 1, words, at) <= 0) i++;
    if (reasons[i] !== undefined) return false;
    if (i + 1 >= count) return true;
    return endAt >= 0 && compare(i + 1, words, endAt) >= 0;
  };
}

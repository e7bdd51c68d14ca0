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

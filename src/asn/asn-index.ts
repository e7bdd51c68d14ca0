import { publicParts, publicSpans4 } from "../address/classify.ts";
import { ipv4Text, ipv6Text } from "../address/parse.ts";
import { lastStartAtOrBelow32 } from "../address/sorted-search.ts";
import { readAddress } from "../data-file/packed-address.ts";
import type { RangeIndex } from "../index/range-index.ts";
import { ByteWriter } from "../lookup/byte-writer.ts";
import { classifyAsn, MAX_ASN } from "./asn-number.ts";
import { buildAsnImage, type AsnImage } from "./asn-image.ts";
import { coverIpv4, coverIpv6Words } from "./cidr-cover.ts";
import type { AsnResult, AsnSummary } from "./asn-json.ts";

/** The most ASes a search answers. */
export const SEARCH_LIMIT = 50;

/**
 * Answers by AS number from one loaded data set: an AsnImage (shared by every thread)
 * over the range index it was built from. Prefixes are put together when asked for:
 * the AS's segments in address order, touching ones joined, each run's public parts
 * (the addresses lookups answer, CONTRACT §2) covered by the fewest CIDR blocks.
 */
export class AsnIndex {
  private readonly names: Buffer;

  constructor(
    readonly index: RangeIndex,
    readonly image: AsnImage,
  ) {
    this.names = Buffer.from(image.names.buffer, image.names.byteOffset, image.names.byteLength);
  }

  /** How many ASes the data answers for. */
  get size(): number {
    return this.image.asns.length;
  }

  /** The AS's slot, or -1 when the data does not know it. */
  slotOf(asn: number): number {
    const asns = this.image.asns;
    let low = 0;
    let high = asns.length - 1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      const value = asns[middle] as number;
      if (value === asn) return middle;
      if (value < asn) low = middle + 1;
      else high = middle - 1;
    }
    return -1;
  }

  /** The answer for an AS number (already checked as public): `found: false` when the data does not know it. */
  result(asn: number): AsnResult {
    const slot = this.slotOf(asn);
    if (slot < 0) return { ...notFoundHead(asn), prefixes: [], prefixes6: [] };
    return { ...this.headOf(slot), prefixes: this.prefixes4(slot), prefixes6: this.prefixes6(slot) };
  }

  /** The answer for the AS in `slot` but its prefixes. */
  private headOf(slot: number): AsnHead {
    const summary = this.summary(slot);
    const country = this.image.countryRecords[slot] as number;
    return {
      asn: summary.asn,
      found: true,
      name: summary.name,
      country_code: summary.country_code,
      country: country === 0 ? null : ((this.index.record(country).country as string | null | undefined) ?? null),
      hosting: this.hosting(slot),
      num_ips: summary.num_ips,
    };
  }

  /** What a search lists about the AS in `slot`. */
  summary(slot: number): AsnSummary {
    const name = this.image.nameRecords[slot] as number;
    const country = this.image.countryRecords[slot] as number;
    return {
      asn: this.image.asns[slot] as number,
      name: name === 0 ? null : this.index.record(name).as_name,
      country_code: country === 0 ? null : this.index.record(country).country_code,
      num_ips: this.image.v4Addresses[slot] as number,
    };
  }

  /** The hosting flag of §15 for the AS in `slot`; null when the data was built without a list of hosting AS numbers (see hosting.ts). */
  hosting(slot: number): boolean | null {
    const flags = this.image.hosting;
    return flags === null ? null : flags[slot] === 1;
  }

  /** The IPv4 prefixes of the AS in `slot`, in address order. */
  prefixes4(slot: number): string[] {
    const prefixes: string[] = [];
    this.forEachPrefix4(slot, (network, prefix) => prefixes.push(`${ipv4Text(network)}/${prefix}`));
    return prefixes;
  }

  /** The IPv6 prefixes of the AS in `slot`, in address order. */
  prefixes6(slot: number): string[] {
    const prefixes: string[] = [];
    this.forEachPrefix6(slot, (words, prefix) => prefixes.push(`${ipv6Text(words)}/${prefix}`));
    return prefixes;
  }

  /** The answer's JSON as UTF-8 (see asnResultJson): the bytes of JSON.stringify(result(asn)). */
  resultJson(asn: number): Uint8Array {
    const slot = this.slotOf(asn);
    if (slot < 0) return asnResultJson(notFoundHead(asn), () => {}, () => {});
    return asnResultJson(
      this.headOf(slot),
      (emit) => this.forEachPrefix4(slot, emit),
      (emit) => this.forEachPrefix6(slot, emit),
    );
  }

  /** Calls `visit(segment)` for the index, in the range index's segment table of `family`, of each segment of the AS in `slot`, in address order. */
  forEachSegmentOf(slot: number, family: 4 | 6, visit: (segment: number) => void): void {
    const offsets = family === 4 ? this.image.v4Offsets : this.image.v6Offsets;
    forEachSegmentIndex(family === 4 ? this.image.v4Segments : this.image.v6Segments, offsets[slot] as number, offsets[slot + 1] as number, visit);
  }

  /** Calls `emit(network, prefix)` for the IPv4 prefixes of the AS in `slot`, in address order. */
  forEachPrefix4(slot: number, emit: (network: number, prefix: number) => void): void {
    const { v4Offsets, v4Segments } = this.image;
    const starts = this.index.image.v4Starts;
    const isPublicSpan4 = publicSpans4();
    forEachRun(v4Segments, v4Offsets[slot] as number, v4Offsets[slot + 1] as number, (first, last) => {
      const start = starts[first] as number;
      const end = last + 1 < starts.length ? (starts[last + 1] as number) - 1 : LAST_V4;
      // Only what lookups answer: a run may hold a block they refuse (see publicParts).
      if (isPublicSpan4(start, end + 1)) coverIpv4(start, end, emit);
      else for (const [from, to] of publicParts(32, BigInt(start), BigInt(end))) coverIpv4(Number(from), Number(to), emit);
    });
  }

  /** Calls `emit(words, prefix)` for the IPv6 prefixes of the AS in `slot`, in address order (`words` is reused). */
  forEachPrefix6(slot: number, emit: (words: Uint32Array, prefix: number) => void): void {
    const { v6Offsets, v6Segments } = this.image;
    const starts = this.index.image.v6Starts;
    const segments = this.index.image.v6Records.length;
    const words = new Uint32Array(4);
    forEachRun(v6Segments, v6Offsets[slot] as number, v6Offsets[slot + 1] as number, (first, last) => {
      const end = last + 1 < segments ? readAddress(starts, 4, (last + 1) * 4) - 1n : LAST_V6;
      for (const [from, to] of publicParts(128, readAddress(starts, 4, first * 4), end)) coverIpv6Words(from, to, emit, words);
    });
  }

  /**
   * The ASes whose name contains `text` (case-insensitive) or whose number starts with it
   * (`AS` before the digits allowed), most IPv4 addresses first (then most IPv6
   * addresses, then the lower number), at most SEARCH_LIMIT. Special-purpose AS numbers
   * are left out: asking for one answers asn_not_public.
   */
  search(text: string): AsnSummary[] {
    return this.searchSlots(text).map((slot) => this.summary(slot));
  }

  /**
   * The slots `search` answers, in its order; `skip(slot)` leaves a slot out before the
   * count. The names are kept in the search's order (see AsnImage), so the matches by
   * name come in that order and the walk stops at the first SEARCH_LIMIT: a short text
   * that most names contain costs no more than a long one. Matches by number are put in
   * their places among them by rank.
   */
  searchSlots(text: string, skip?: (slot: number) => boolean): number[] {
    const { asns, ranked, rankOf } = this.image;
    const wanted = (slot: number) => classifyAsn(asns[slot] as number) === null && !skip?.(slot);
    /** The ranks answered so far, ascending. */
    const top: number[] = [];
    const lowered = text.toLowerCase();
    // Names are newline-separated: a text with a newline is in none of them.
    if (lowered.length > 0 && !lowered.includes("\n")) {
      const needle = Buffer.from(lowered);
      const starts = this.image.nameStarts;
      let at = this.names.indexOf(needle);
      while (at >= 0 && top.length < SEARCH_LIMIT) {
        const rank = rankAt(starts, at);
        if (wanted(ranked[rank] as number)) top.push(rank);
        // On to the next name: one match a name is enough.
        at = this.names.indexOf(needle, starts[rank + 1] as number);
      }
    }
    const digits = searchDigits(text);
    if (digits !== undefined) {
      this.searchNumbers(digits, (slot) => {
        const rank = rankOf[slot] as number;
        if (top.length === SEARCH_LIMIT && rank > (top[SEARCH_LIMIT - 1] as number)) return;
        const at = lowerBound(top, rank);
        if (top[at] === rank || !wanted(slot)) return;
        top.splice(at, 0, rank);
        if (top.length > SEARCH_LIMIT) top.pop();
      });
    }
    return top.map((rank) => ranked[rank] as number);
  }

  /** Adds the slots whose number, in decimal, starts with `digits`. */
  private searchNumbers(digits: string, add: (slot: number) => void): void {
    const asns = this.image.asns;
    // A number with a leading zero: only 0 itself is written so.
    if (digits.startsWith("0")) {
      if (digits === "0" && this.slotOf(0) >= 0) add(this.slotOf(0));
      return;
    }
    // The numbers starting with p are p, p0…p9, p00…p99, …: one span of slots each.
    const prefix = Number(digits);
    for (let scale = 1; prefix * scale <= MAX_ASN; scale *= 10) {
      const low = prefix * scale;
      const high = (prefix + 1) * scale - 1;
      for (let slot = lowerBound(asns, low); slot < asns.length && (asns[slot] as number) <= high; slot++) add(slot);
    }
  }
}

const LAST_V4 = 0xffffffff;
/** Where an answer's writer starts: most answers fit; the largest double it some six times. */
const ANSWER_START_BYTES = 4096;
const encoder = new TextEncoder();
const LAST_V6 = (1n << 128n) - 1n;

/**
 * Calls `visit(segment)` for each segment index encoded in `bytes[from, to)` (see
 * segmentsBySlot in asn-image.ts: the first index, then differences, as LEB128 varints).
 */
function forEachSegmentIndex(bytes: Uint8Array, from: number, to: number, visit: (segment: number) => void): void {
  let at = from;
  let index = -1;
  while (at < to) {
    let value = 0;
    let shift = 0;
    let byte: number;
    do {
      byte = bytes[at++] as number;
      value += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte >= 0x80);
    index = index < 0 ? value : index + value;
    visit(index);
  }
}

/** Calls `run(first, last)` for each run of consecutive segment indices among those encoded in `bytes[from, to)`. */
function forEachRun(bytes: Uint8Array, from: number, to: number, run: (first: number, last: number) => void): void {
  let first = -1;
  let previous = -1;
  forEachSegmentIndex(bytes, from, to, (segment) => {
    if (first < 0) first = segment;
    else if (segment !== previous + 1) {
      run(first, previous);
      first = segment;
    }
    previous = segment;
  });
  if (first >= 0) run(first, previous);
}

/** The rank whose name holds byte `at`: the last name start at or below it. */
function rankAt(starts: Uint32Array, at: number): number {
  return lastStartAtOrBelow32(starts, at, 0, starts.length - 2);
}

/** The first index whose value is at least `value`. */
function lowerBound(values: ArrayLike<number>, value: number): number {
  let low = 0;
  let high = values.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((values[middle] as number) < value) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** An AsnResult but its prefixes. */
export type AsnHead = Omit<AsnResult, "prefixes" | "prefixes6">;

/** The head of an AS the lookups answer for no address (CONTRACT §14). */
export function notFoundHead(asn: number): AsnHead {
  return { asn, found: false, name: null, country_code: null, country: null, hosting: null, num_ips: 0 };
}

/**
 * An AsnResult's JSON as UTF-8: the bytes of JSON.stringify of the head with `prefixes`
 * and `prefixes6` after it (a test holds them together), the prefixes written straight
 * from their numbers, without a string each: the largest ASes have ten thousand.
 * `forEach4`, `forEach6` call their `emit` with each prefix, in address order.
 */
export function asnResultJson(
  head: AsnHead,
  forEach4: (emit: (network: number, prefix: number) => void) => void,
  forEach6: (emit: (words: Uint32Array, prefix: number) => void) => void,
): Uint8Array {
  // The segments say little about the prefixes' count (AS13335: 49,000 segments, 1,673
  // prefixes): start small and let the writer double as it needs.
  const out = new ByteWriter(ANSWER_START_BYTES);
  const headText = JSON.stringify(head);
  out.raw(encoder.encode(headText.slice(0, -1)));
  out.ascii(',"prefixes":[');
  let first = true;
  forEach4((network, prefix) => {
    out.ascii(first ? '"' : ',"');
    first = false;
    out.ipv4(network);
    out.ascii(`/${prefix}"`);
  });
  out.ascii('],"prefixes6":[');
  first = true;
  forEach6((words, prefix) => {
    out.ascii(first ? '"' : ',"');
    first = false;
    out.ipv6(words);
    out.ascii(`/${prefix}"`);
  });
  out.ascii("]}");
  return out.finish();
}

/** The digits a search text names a number's start by (`13`, `AS13`), or undefined for a text that is no number. */
export function searchDigits(text: string): string | undefined {
  return /^(?:[Aa][Ss])?([0-9]{1,10})$/.exec(text)?.[1];
}

const built = new WeakMap<RangeIndex, AsnIndex>();

/**
 * The AS index of a range index, built on first use into the range index's image. A
 * server builds it on a loader thread (LiveIndex.buildAsnIndex, and with every reload;
 * see serve/index-loader.ts) and hands the image to its worker threads, which answer from the same shared memory
 * (AsnService waits for it there rather than build a copy). The CLI and tests build it
 * when they first ask.
 */
export function asnIndexOf(index: RangeIndex): AsnIndex {
  let asnIndex = built.get(index);
  if (asnIndex === undefined) {
    const image = (index.image.asn ??= buildAsnImage(index.image));
    asnIndex = new AsnIndex(index, image);
    built.set(index, asnIndex);
  }
  return asnIndex;
}

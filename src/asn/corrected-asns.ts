import { publicParts, publicSpans4 } from "../address/classify.ts";
import { ipv4Text, ipv6Text } from "../address/parse.ts";
import { lastStartAtOrBelow128, lastStartAtOrBelow32 } from "../address/sorted-search.ts";
import { wordsOf } from "../corrections/correction-rules.ts";
import type { CorrectionFields, LayeredFields } from "../corrections/correction.ts";
import type { CorrectionTable } from "../corrections/correction-table.ts";
import { readAddress } from "../data-file/packed-address.ts";
import { countryName } from "../importer/country-names.ts";
import { asnResultJson, notFoundHead, SEARCH_LIMIT, searchDigits, type AsnHead, type AsnIndex } from "./asn-index.ts";
import type { AsnResult, AsnSummary } from "./asn-json.ts";
import { recordAsnNumbers, valueText } from "./asn-image.ts";
import { classifyAsn } from "./asn-number.ts";
import { coverIpv4, coverIpv6Words } from "./cidr-cover.ts";

/**
 * The AS answers with the local corrections laid over them (CONTRACT §14 with §15): an
 * AS's prefixes cover exactly the addresses whose lookup answers its number, and a
 * lookup answers a correction's `asn` across its block. So a correction naming `asn`
 * moves its block from one AS to another (or out of every AS, with null), and one naming
 * `as_name` or `country_code` changes what the majorities of an AS are counted from.
 *
 * The corrected segments (see CorrectionTable) that name one of those three fields are
 * the "touched" ones. An AS is "affected" when the data gives it an address in a touched
 * segment or a touched segment names its number; every other AS answers as the data
 * alone says (AsnIndex), and an affected one is put together here, by the rules the AS
 * index follows (public addresses only, the majorities, the fewest blocks).
 *
 * One per pair of AS index and correction table, both immutable: a new data set or a
 * change to the corrections makes a new one (see `over`). It keeps the touched segments
 * and the affected numbers, and what the search needs of each affected AS once put
 * together; an answer's prefixes are put together when asked for (AsnService keeps the
 * answers' bytes). Nothing is made per data segment: a correction of a large block
 * costs time in the first answers after it, not memory.
 */
export class CorrectedAsns {
  /** The AS numbers whose answers are put together here (see above); every other AS answers as the data says. */
  readonly affected: ReadonlySet<number>;
  /** Per family, the touched segments in address order. */
  private readonly touched: { readonly 4: readonly Touched[]; readonly 6: readonly Touched[] };
  /** Per AS number, the touched segments of each family that name it (`asn`), in address order. */
  private readonly naming = new Map<number, { 4: Touched[]; 6: Touched[] }>();
  /** What the search lists of the affected ASes, in its order, once a search has asked (their prefixes are put together again when asked for). */
  private heads: (Ranked & { lowered: string | null })[] | undefined;

  private constructor(
    readonly asns: AsnIndex,
    touched: { 4: Touched[]; 6: Touched[] },
  ) {
    this.touched = touched;
    const affected = new Set<number>();
    const recordAsns = recordAsnsOf(asns);
    for (const family of FAMILIES) {
      for (const { first, last, fields } of touched[family]) {
        if (fields.asn !== undefined && fields.asn !== null) {
          affected.add(fields.asn);
          let named = this.naming.get(fields.asn);
          if (named === undefined) this.naming.set(fields.asn, (named = { 4: [], 6: [] }));
          named[family].push({ first, last, fields });
        }
        this.forEachDataSegment(family, first, last, (_from, _to, id) => {
          const asn = recordAsns[id] as number;
          if (!Number.isNaN(asn)) affected.add(asn);
        });
      }
    }
    this.affected = affected;
  }

  /** The corrected answers over an AS index, or null when no correction names a field AS answers are made of. */
  static over(asns: AsnIndex, table: CorrectionTable): CorrectedAsns | null {
    const last = built.get(asns);
    if (last?.content === table.content) return last.corrected;
    const touched = { 4: [] as Touched[], 6: [] as Touched[] };
    for (const family of FAMILIES) {
      table.forEachCorrected(family, (first, last, fields) => {
        if (AS_FIELDS.some((field) => fields[field] !== undefined)) touched[family].push({ first, last, fields });
      });
    }
    const corrected = touched[4].length + touched[6].length === 0 ? null : new CorrectedAsns(asns, touched);
    built.set(asns, { content: table.content, corrected });
    return corrected;
  }

  /** The answer for an AS number (already checked as public). */
  result(asn: number): AsnResult {
    if (!this.affected.has(asn)) return this.asns.result(asn);
    const { head, runs } = this.assemble(asn);
    const prefixes: string[] = [];
    const prefixes6: string[] = [];
    for (const [first, last] of runs[4]) coverIpv4(Number(first), Number(last), (network, prefix) => prefixes.push(`${ipv4Text(network)}/${prefix}`));
    for (const [first, last] of runs[6]) coverIpv6Words(first, last, (words, prefix) => prefixes6.push(`${ipv6Text(words)}/${prefix}`));
    return { ...head, prefixes, prefixes6 };
  }

  /** The answer's JSON as UTF-8, as AsnIndex.resultJson writes it. */
  resultJson(asn: number): Uint8Array {
    if (!this.affected.has(asn)) return this.asns.resultJson(asn);
    const { head, runs } = this.assemble(asn);
    const words = new Uint32Array(4);
    return asnResultJson(
      head,
      (emit) => {
        for (const [first, last] of runs[4]) coverIpv4(Number(first), Number(last), emit);
      },
      (emit) => {
        for (const [first, last] of runs[6]) coverIpv6Words(first, last, emit, words);
      },
    );
  }

  /**
   * The search of AsnIndex.search, over the corrected answers: the data's matches that
   * are not affected, and the affected ASes that match as corrected. The affected ASes
   * are put together at the first search and kept in the search's order, so a search
   * stops at the first that could no longer reach the fifty.
   */
  search(text: string): AsnSummary[] {
    const image = this.asns.image;
    const ranked: Ranked[] = this.asns
      .searchSlots(text, (slot) => this.affected.has(image.asns[slot] as number))
      .map((slot) => ({ summary: this.asns.summary(slot), v6: image.v6Addresses[slot] as number }));
    const fiftieth = ranked.length === SEARCH_LIMIT ? ranked[SEARCH_LIMIT - 1] : undefined;
    const matches = searchMatcher(text);
    let found = 0;
    for (const head of (this.heads ??= this.rankHeads())) {
      if (fiftieth !== undefined && inSearchOrder(fiftieth, head) < 0) break;
      if (!matches(head.summary.asn, head.lowered)) continue;
      ranked.push(head);
      if (++found === SEARCH_LIMIT) break;
    }
    ranked.sort(inSearchOrder);
    return ranked.slice(0, SEARCH_LIMIT).map(({ summary }) => summary);
  }

  /** Every affected AS that is found and not special-purpose, as the search lists it, in the search's order. */
  private rankHeads(): (Ranked & { lowered: string | null })[] {
    const heads: (Ranked & { lowered: string | null })[] = [];
    for (const asn of this.affected) {
      if (classifyAsn(asn) !== null) continue;
      const { head, v6Addresses } = this.assemble(asn);
      if (!head.found) continue;
      const summary = { asn, name: head.name, country_code: head.country_code, num_ips: head.num_ips };
      heads.push({ summary, v6: v6Addresses, lowered: head.name?.toLowerCase().replaceAll("\n", " ") ?? null });
    }
    return heads.sort(inSearchOrder);
  }


  /**
   * An affected AS put together: per family, its data segments outside the touched
   * segments that name `asn`, with the name and country of the touched segments they lie
   * in, and the touched segments that name its number, with their data's name and
   * country where they do not name them; cut to public addresses, counted, joined into
   * runs.
   */
  private assemble(asn: number): { head: AsnHead; runs: { 4: Span[]; 6: Span[] }; v6Addresses: number } {
    const slot = this.asns.slotOf(asn);
    const image = this.asns.index.image;
    const fields = image.info.fields;
    /** A field of record `id` as its JSON text ("null" for a gap or a field the data lacks), each value decoded once. */
    const texts = new Map<number, string>();
    const textOf = (id: number, field: number) => {
      if (id === 0 || field < 0) return "null";
      const value = image.recordValues[(id - 1) * fields.length + field] as number;
      const key = value * fields.length + field;
      let text = texts.get(key);
      if (text === undefined) texts.set(key, (text = valueText(image, field, value)));
      return text;
    };
    const nameField = fields.indexOf("as_name");
    const codeField = fields.indexOf("country_code");
    const countryField = fields.indexOf("country");
    const names = new Tally<null>();
    // A country's name: that of a record answering its code, or the name a correction's code has.
    const countries = new Tally<number | string | null>();
    // Counted exactly: an IPv6 count past 2^53 as a double would lose the addresses that
    // decide a majority (2^80 + 1 against 2^80).
    const addresses = { 4: 0n, 6: 0n };
    const runs = { 4: [] as Span[], 6: [] as Span[] };
    for (const family of FAMILIES) {
      const bits = family === 4 ? 32 : 128;
      /**
       * Adds the public addresses of `first`…`last` to a run list, and counts them towards
       * the name and country they answer. `isPublic4`: the quick test of publicSpans4, for
       * the IPv4 spans of one list (asked in address order).
       */
      const take = (into: Span[], isPublic4: (first: number, end: number) => boolean, first: bigint, last: bigint, id: number, corrected: LayeredFields | null) => {
        const name = corrected?.as_name !== undefined ? JSON.stringify(corrected.as_name) : textOf(id, nameField);
        const code = corrected?.country_code !== undefined ? JSON.stringify(corrected.country_code) : textOf(id, codeField);
        const label = corrected?.country_code !== undefined ? (corrected.country_code === null ? null : countryName(corrected.country_code)) : id;
        const add = (from: bigint, to: bigint) => {
          const count = to - from + 1n;
          addresses[family] += count;
          names.add(name, null, family, count);
          countries.add(code, label, family, count);
          addSpan(into, from, to);
        };
        if (family === 4 && isPublic4(Number(first), Number(last) + 1)) add(first, last);
        else for (const [from, to] of publicParts(bits, first, last)) add(from, to);
      };
      const kept: Span[] = [];
      const keptPublic4 = publicSpans4();
      if (slot >= 0) this.forEachKeptPart(slot, family, (first, last, id, fields) => take(kept, keptPublic4, first, last, id, fields));
      const movedIn: Span[] = [];
      const movedPublic4 = publicSpans4();
      for (const touched of this.naming.get(asn)?.[family] ?? []) {
        this.forEachDataSegment(family, touched.first, touched.last, (first, last, id) => take(movedIn, movedPublic4, first, last, id, touched.fields));
      }
      runs[family] = mergeSpans(kept, movedIn);
    }
    if (addresses[4] === 0n && addresses[6] === 0n) return { head: notFoundHead(asn), runs: { 4: [], 6: [] }, v6Addresses: 0 };
    const name = names.winner();
    const country = countries.winner();
    const countryLabel = country === null ? null : typeof country.label === "number" ? (JSON.parse(textOf(country.label, countryField)) as string | null) : country.label;
    const head: AsnHead = {
      asn,
      found: true,
      name: name === null ? null : (JSON.parse(name.text) as string),
      country_code: country === null ? null : (JSON.parse(country.text) as string),
      country: countryLabel,
      hosting: this.asns.index.hostingOfAsn(asn),
      num_ips: Number(addresses[4]),
    };
    // Rounded as the AS index keeps its IPv6 counts (each slot's sum rounded once to a
    // float32), so the two order searches alike.
    return { head, runs, v6Addresses: Math.fround(Number(addresses[6])) };
  }

  /**
   * Calls `visit(first, last, record, fields)` for each part of the AS's data segments of a
   * family that stays with it: outside every touched segment (`fields` null), or inside
   * one that does not name `asn` (its fields).
   */
  private forEachKeptPart(slot: number, family: 4 | 6, visit: (first: bigint, last: bigint, record: number, fields: LayeredFields | null) => void): void {
    const touched = this.touched[family];
    const image = this.asns.index.image;
    const words: 1 | 4 = family === 4 ? 1 : 4;
    const starts = family === 4 ? image.v4Starts : image.v6Starts;
    const records = family === 4 ? image.v4Records : image.v6Records;
    const end = 1n << BigInt(32 * words);
    let t = 0;
    this.asns.forEachSegmentOf(slot, family, (segment) => {
      const first = startOf(starts, words, segment);
      const last = (segment + 1 < records.length ? startOf(starts, words, segment + 1) : end) - 1n;
      const id = records[segment] as number;
      // The first touched segment not wholly before this one: a search from where the
      // last one left off (an AS's segments come in address order).
      t = firstEndingAtOrAfter(touched, first, t);
      let from = first;
      for (let k = t; k < touched.length && from <= last; k++) {
        const { first: touchFirst, last: touchLast, fields } = touched[k] as Touched;
        if (touchFirst > last) break;
        if (touchFirst > from) visit(from, touchFirst - 1n, id, null);
        const to = touchLast < last ? touchLast : last;
        if (fields.asn === undefined) visit(touchFirst > from ? touchFirst : from, to, id, fields);
        from = to + 1n;
      }
      if (from <= last) visit(from, last, id, null);
    });
  }

  /** Calls `visit(from, to, record)` for each part of the data's segments (record 0: a gap) within `first`…`last`. */
  private forEachDataSegment(family: 4 | 6, first: bigint, last: bigint, visit: (from: bigint, to: bigint, record: number) => void): void {
    const image = this.asns.index.image;
    const words: 1 | 4 = family === 4 ? 1 : 4;
    const starts = family === 4 ? image.v4Starts : image.v6Starts;
    const records = family === 4 ? image.v4Records : image.v6Records;
    const end = 1n << BigInt(32 * words);
    let i = family === 4 ? lastStartAtOrBelow32(starts, Number(first)) : lastStartAtOrBelow128(starts, wordsOf(first));
    for (; i < records.length; i++) {
      const start = startOf(starts, words, i);
      if (start > last) break;
      const next = i + 1 < records.length ? startOf(starts, words, i + 1) : end;
      visit(start > first ? start : first, next - 1n < last ? next - 1n : last, records[i] as number);
    }
  }

}

type Span = [first: bigint, last: bigint];

/** A corrected segment that names a field AS answers are made of. */
interface Touched {
  readonly first: bigint;
  readonly last: bigint;
  readonly fields: LayeredFields;
}

const FAMILIES = [4, 6] as const;

/** The fields of a lookup an AS answer is made of: its number, and the name and country its majorities count. */
const AS_FIELDS = ["asn", "as_name", "country_code"] as const satisfies readonly (keyof CorrectionFields)[];

/** The first address of segment `i` of a family's starts (`words` a start: 1 or 4). */
function startOf(starts: Uint32Array, words: 1 | 4, i: number): bigint {
  return words === 1 ? BigInt(starts[i] as number) : readAddress(starts, 4, i * 4);
}

/** The first index from `from` on whose segment ends at or after `address` (`touched.length` when none does). */
function firstEndingAtOrAfter(touched: readonly Touched[], address: bigint, from: number): number {
  let low = from;
  let high = touched.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((touched[middle] as Touched).last < address) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** Appends a span to a list in address order, joining it to the last one when they touch. */
function addSpan(spans: Span[], first: bigint, last: bigint): void {
  const previous = spans[spans.length - 1];
  if (previous !== undefined && previous[1] + 1n === first) previous[1] = last;
  else spans.push([first, last]);
}

/** Two disjoint span lists in address order as one, touching spans joined. */
function mergeSpans(a: readonly Span[], b: readonly Span[]): Span[] {
  if (b.length === 0) return a as Span[];
  const merged: Span[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    const next = j >= b.length || (i < a.length && (a[i] as Span)[0] < (b[j] as Span)[0]) ? (a[i++] as Span) : (b[j++] as Span);
    addSpan(merged, next[0], next[1]);
  }
  return merged;
}

const recordAsns = new WeakMap<AsnIndex, Float64Array>();

function recordAsnsOf(asns: AsnIndex): Float64Array {
  let numbers = recordAsns.get(asns);
  if (numbers === undefined) recordAsns.set(asns, (numbers = recordAsnNumbers(asns.index.image)));
  return numbers;
}

/**
 * The addresses of each value of a field, and the winner by the AS index's rule (see
 * majorityRecords in asn-image.ts): most IPv4 addresses, then most IPv6 ones (counted
 * exactly), then the value whose JSON text sorts first; null never wins. Values are
 * counted by their JSON text, the data's as it stores them and a correction's as
 * JSON.stringify writes it, so one name counts once whichever gave it. `label` says how to name the winner (a record
 * whose field names it, or the name itself), asked only of the winner.
 */
class Tally<Label> {
  private readonly counts = new Map<string, { text: string; label: Label; 4: bigint; 6: bigint }>();

  add(text: string, label: Label, family: 4 | 6, addresses: bigint): void {
    if (text === "null") return;
    let entry = this.counts.get(text);
    if (entry === undefined) this.counts.set(text, (entry = { text, label, 4: 0n, 6: 0n }));
    entry[family] += addresses;
  }

  winner(): { text: string; label: Label } | null {
    let best: { text: string; label: Label; 4: bigint; 6: bigint } | null = null;
    for (const entry of this.counts.values()) {
      if (best === null || entry[4] > best[4] || (entry[4] === best[4] && (entry[6] > best[6] || (entry[6] === best[6] && entry.text < best.text)))) best = entry;
    }
    return best;
  }
}

/** An AS as the search lists it, with its IPv6 count for the order. */
interface Ranked {
  readonly summary: AsnSummary;
  readonly v6: number;
}

/** The search's order: most IPv4 addresses, then most IPv6 addresses, then the lower number. */
function inSearchOrder(a: Ranked, b: Ranked): number {
  return b.summary.num_ips - a.summary.num_ips || b.v6 - a.v6 || a.summary.asn - b.summary.asn;
}

/**
 * Whether an AS matches a search text as AsnIndex.search matches the data's: its name,
 * in lower case, contains the text in lower case (a text with a newline matches none), or
 * the text, with or without `AS` before it, is the start of its number in decimal (a
 * leading zero: 0 alone).
 */
function searchMatcher(text: string): (asn: number, loweredName: string | null) => boolean {
  const lowered = text.toLowerCase();
  const byName = lowered.length > 0 && !lowered.includes("\n");
  const digits = searchDigits(text);
  return (asn, loweredName) => {
    if (byName && loweredName !== null && loweredName.includes(lowered)) return true;
    if (digits === undefined) return false;
    return digits.startsWith("0") ? digits === "0" && asn === 0 : String(asn).startsWith(digits);
  };
}

/** Per AS index, the corrected answers over the last corrections asked for, by their content (see CorrectionTable.content). */
const built = new WeakMap<AsnIndex, { content: string; corrected: CorrectedAsns | null }>();

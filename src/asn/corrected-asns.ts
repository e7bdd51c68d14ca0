import { publicParts } from "../address/classify.ts";
import { ipv4Text, ipv6Text } from "../address/parse.ts";
import { lastStartAtOrBelow128, lastStartAtOrBelow32 } from "../address/sorted-search.ts";
import { wordsOf } from "../corrections/correction-rules.ts";
import type { CorrectionFields } from "../corrections/correction.ts";
import type { CorrectionTable } from "../corrections/correction-table.ts";
import { readAddress } from "../data-file/packed-address.ts";
import { countryName } from "../importer/country-names.ts";
import type { NetworkRecord } from "../index/network-record.ts";
import { asnResultJson, notFoundHead, SEARCH_LIMIT, type AsnHead, type AsnIndex } from "./asn-index.ts";
import type { AsnResult, AsnSummary } from "./asn-json.ts";
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
 * segment or a touched segment's lookups answer its number; every other AS answers as
 * the data alone says (AsnIndex), and an affected one is put together here: its data
 * segments outside the touched ones, plus the touched parts that answer its number,
 * each with the name and country its lookups answer, cut to public addresses, counted
 * and covered by the rules the AS index follows.
 *
 * One per pair of AS index and correction table, both immutable: a new data set or a
 * change to the corrections makes a new one (see `correctedAsns`). Affected answers are
 * put together when first asked for and kept.
 */
export class CorrectedAsns {
  /** The AS numbers whose answers the corrections change. */
  readonly affected: ReadonlySet<number>;
  /** Per family, the touched segments as [first, last], in address order. */
  private readonly touched: { readonly 4: readonly Span[]; readonly 6: readonly Span[] };
  /** Per AS number, the touched parts whose lookups answer it. */
  private readonly movedIn = new Map<number, { 4: Part[]; 6: Part[] }>();
  private readonly answers = new Map<number, Assembled>();
  private readonly records = new Map<number, NetworkRecord>();

  private constructor(
    readonly asns: AsnIndex,
    table: CorrectionTable,
  ) {
    const affected = new Set<number>();
    const touched = { 4: [] as Span[], 6: [] as Span[] };
    for (const family of FAMILIES) {
      table.forEachCorrected(family, (first, last, fields) => {
        if (!AS_FIELDS.some((field) => fields[field] !== undefined)) return;
        touched[family].push([first, last]);
        this.forEachDataSegment(family, first, last, (from, to, id) => {
          const record = id === 0 ? null : this.record(id);
          if (record?.asn != null) affected.add(record.asn);
          const part = correctedPart(from, to, record, fields);
          if (part === null) return;
          affected.add(part.asn);
          let moved = this.movedIn.get(part.asn);
          if (moved === undefined) this.movedIn.set(part.asn, (moved = { 4: [], 6: [] }));
          moved[family].push(part);
        });
      });
    }
    this.affected = affected;
    this.touched = touched;
  }

  /** The corrected answers over an AS index, or null when no correction names a field AS answers are made of. */
  static over(asns: AsnIndex, table: CorrectionTable): CorrectedAsns | null {
    let perTable = built.get(table);
    if (perTable === undefined) built.set(table, (perTable = new WeakMap()));
    let corrected = perTable.get(asns);
    if (corrected === undefined) {
      corrected = namesAsFields(table) ? new CorrectedAsns(asns, table) : null;
      perTable.set(asns, corrected);
    }
    return corrected;
  }

  /** The answer for an AS number (already checked as public). */
  result(asn: number): AsnResult {
    if (!this.affected.has(asn)) return this.asns.result(asn);
    const { head, v4, v6 } = this.assembled(asn);
    const prefixes: string[] = [];
    const prefixes6: string[] = [];
    for (const [first, last] of v4) coverIpv4(Number(first), Number(last), (network, prefix) => prefixes.push(`${ipv4Text(network)}/${prefix}`));
    for (const [first, last] of v6) coverIpv6Words(first, last, (words, prefix) => prefixes6.push(`${ipv6Text(words)}/${prefix}`));
    return { ...head, prefixes, prefixes6 };
  }

  /** The answer's JSON as UTF-8, as AsnIndex.resultJson writes it. */
  resultJson(asn: number): Uint8Array {
    if (!this.affected.has(asn)) return this.asns.resultJson(asn);
    const { head, v4, v6 } = this.assembled(asn);
    const words = new Uint32Array(4);
    return asnResultJson(
      head,
      (emit) => {
        for (const [first, last] of v4) coverIpv4(Number(first), Number(last), emit);
      },
      (emit) => {
        for (const [first, last] of v6) coverIpv6Words(first, last, emit, words);
      },
    );
  }

  /** The search of AsnIndex.search, over the corrected answers: the data's matches that are not affected, and the affected ASes that match as corrected. */
  search(text: string): AsnSummary[] {
    const image = this.asns.image;
    const ranked: { summary: AsnSummary; v6: number }[] = this.asns
      .searchSlots(text, (slot) => this.affected.has(image.asns[slot] as number))
      .map((slot) => ({ summary: this.asns.summary(slot), v6: image.v6Addresses[slot] as number }));
    for (const asn of this.affected) {
      if (classifyAsn(asn) !== null) continue;
      const { head, v6Addresses } = this.assembled(asn);
      if (!head.found || !matchesSearch(text, asn, head.name)) continue;
      ranked.push({ summary: { asn, name: head.name, country_code: head.country_code, num_ips: head.num_ips }, v6: v6Addresses });
    }
    ranked.sort((a, b) => b.summary.num_ips - a.summary.num_ips || b.v6 - a.v6 || a.summary.asn - b.summary.asn);
    return ranked.slice(0, SEARCH_LIMIT).map(({ summary }) => summary);
  }

  /** An affected AS's answer but its prefixes, and its public runs of each family. */
  private assembled(asn: number): Assembled {
    let assembled = this.answers.get(asn);
    if (assembled === undefined) {
      assembled = this.assemble(asn);
      this.answers.set(asn, assembled);
    }
    return assembled;
  }

  private assemble(asn: number): Assembled {
    const slot = this.asns.slotOf(asn);
    const tallies = { name: new Tally(), country: new Tally() };
    const runs = { 4: [] as Span[], 6: [] as Span[] };
    const addresses = { 4: 0, 6: 0 };
    for (const family of FAMILIES) {
      const parts = slot < 0 ? [] : this.untouchedParts(slot, family);
      parts.push(...(this.movedIn.get(asn)?.[family] ?? []));
      parts.sort((a, b) => (a.first < b.first ? -1 : a.first > b.first ? 1 : 0));
      const familyRuns = runs[family];
      for (const part of parts) {
        for (const [first, last] of publicParts(family === 4 ? 32 : 128, part.first, part.last)) {
          const count = Number(last - first + 1n);
          addresses[family] += count;
          tallies.name.add(part.name, null, family, count);
          tallies.country.add(part.countryCode, part.country, family, count);
          const previous = familyRuns[familyRuns.length - 1];
          if (previous !== undefined && previous[1] + 1n === first) previous[1] = last;
          else familyRuns.push([first, last]);
        }
      }
    }
    if (addresses[4] === 0 && addresses[6] === 0) return { head: notFoundHead(asn), v4: [], v6: [], v6Addresses: 0 };
    const country = tallies.country.winner();
    const head: AsnHead = {
      asn,
      found: true,
      name: tallies.name.winner()?.value ?? null,
      country_code: country?.value ?? null,
      country: country?.label ?? null,
      hosting: this.asns.index.hostingOfAsn(asn),
      num_ips: addresses[4],
    };
    // Rounded as the AS index keeps its IPv6 counts, so the two order searches alike.
    return { head, v4: runs[4], v6: runs[6], v6Addresses: Math.fround(addresses[6]) };
  }

  /** The AS's data segments of a family, less the touched segments, each part with its record's values. */
  private untouchedParts(slot: number, family: 4 | 6): Part[] {
    const parts: Part[] = [];
    const touched = this.touched[family];
    const image = this.asns.index.image;
    const words: 1 | 4 = family === 4 ? 1 : 4;
    const starts = family === 4 ? image.v4Starts : image.v6Starts;
    const records = family === 4 ? image.v4Records : image.v6Records;
    const end = 1n << BigInt(32 * words);
    let t = 0;
    this.asns.forEachSegmentOf(slot, family, (segment) => {
      const first = readAddress(starts, words, segment * words);
      const last = (segment + 1 < records.length ? readAddress(starts, words, (segment + 1) * words) : end) - 1n;
      const record = this.record(records[segment] as number);
      while (t < touched.length && (touched[t] as Span)[1] < first) t++;
      let from = first;
      for (let k = t; k < touched.length && (touched[k] as Span)[0] <= last && from <= last; k++) {
        const [touchFirst, touchLast] = touched[k] as Span;
        if (touchFirst > from) parts.push(recordPart(from, touchFirst - 1n, record));
        from = touchLast + 1n;
      }
      if (from <= last) parts.push(recordPart(from, last, record));
    });
    return parts;
  }

  /** Calls `visit(first, last, record)` for each part of the data's segments (record 0: a gap) within `first`…`last`. */
  private forEachDataSegment(family: 4 | 6, first: bigint, last: bigint, visit: (from: bigint, to: bigint, record: number) => void): void {
    const image = this.asns.index.image;
    const words: 1 | 4 = family === 4 ? 1 : 4;
    const starts = family === 4 ? image.v4Starts : image.v6Starts;
    const records = family === 4 ? image.v4Records : image.v6Records;
    const end = 1n << BigInt(32 * words);
    let i = family === 4 ? lastStartAtOrBelow32(starts, Number(first)) : lastStartAtOrBelow128(starts, wordsOf(first));
    for (; i < records.length; i++) {
      const start = readAddress(starts, words, i * words);
      if (start > last) break;
      const next = i + 1 < records.length ? readAddress(starts, words, (i + 1) * words) : end;
      visit(start > first ? start : first, next - 1n < last ? next - 1n : last, records[i] as number);
    }
  }

  private record(id: number): NetworkRecord {
    let record = this.records.get(id);
    if (record === undefined) this.records.set(id, (record = this.asns.index.record(id)));
    return record;
  }
}

type Span = [first: bigint, last: bigint];

/** A run of addresses whose lookups answer one AS number, name and country. */
interface Part {
  readonly first: bigint;
  readonly last: bigint;
  readonly asn: number;
  readonly name: string | null;
  readonly countryCode: string | null;
  readonly country: string | null;
}

interface Assembled {
  readonly head: AsnHead;
  readonly v4: readonly Span[];
  readonly v6: readonly Span[];
  /** The IPv6 addresses of `v6`, for the search's order. */
  readonly v6Addresses: number;
}

const FAMILIES = [4, 6] as const;

/** The fields of a lookup an AS answer is made of: its number, and the name and country its majorities count. */
const AS_FIELDS = ["asn", "as_name", "country_code"] as const satisfies readonly (keyof CorrectionFields)[];

function namesAsFields(table: CorrectionTable): boolean {
  let names = false;
  for (const family of FAMILIES) {
    table.forEachCorrected(family, (_first, _last, fields) => {
      if (AS_FIELDS.some((field) => fields[field] !== undefined)) names = true;
    });
  }
  return names;
}

/** What a lookup in `first`…`last` answers with the correction's fields over the data's record (null: a gap), or null when it answers no AS. */
function correctedPart(first: bigint, last: bigint, record: NetworkRecord | null, fields: CorrectionFields): Part | null {
  const asn = fields.asn !== undefined ? fields.asn : (record?.asn ?? null);
  if (asn === null) return null;
  const code = fields.country_code !== undefined ? fields.country_code : (record?.country_code ?? null);
  return {
    first,
    last,
    asn,
    name: fields.as_name !== undefined ? fields.as_name : (record?.as_name ?? null),
    countryCode: code,
    country: fields.country_code !== undefined ? (code === null ? null : countryName(code)) : (record?.country ?? null),
  };
}

function recordPart(first: bigint, last: bigint, record: NetworkRecord): Part {
  return { first, last, asn: record.asn as number, name: record.as_name, countryCode: record.country_code, country: record.country };
}

/**
 * The addresses of each value of a field, and the winner by the AS index's rule (see
 * majorityRecords in asn-image.ts): most IPv4 addresses, then most IPv6 ones, then the
 * value whose JSON text sorts first; null values never win.
 */
class Tally {
  private readonly counts = new Map<string, { value: string; label: string | null; 4: number; 6: number }>();

  /** Counts `addresses` of a family for `value` (a country code, say), which answers with `label` (its name). */
  add(value: string | null, label: string | null, family: 4 | 6, addresses: number): void {
    if (value === null) return;
    let entry = this.counts.get(value);
    if (entry === undefined) this.counts.set(value, (entry = { value, label, 4: 0, 6: 0 }));
    entry[family] += addresses;
  }

  winner(): { value: string; label: string | null } | null {
    let best: { value: string; label: string | null; 4: number; 6: number } | null = null;
    for (const entry of this.counts.values()) {
      if (best === null || entry[4] > best[4] || (entry[4] === best[4] && (entry[6] > best[6] || (entry[6] === best[6] && JSON.stringify(entry.value) < JSON.stringify(best.value))))) best = entry;
    }
    return best;
  }
}

/**
 * Whether an AS matches a search text as AsnIndex.search matches the data's: its name
 * contains the text in lower case (a text with a newline matches none), or the text, with
 * or without `AS` before it, is the start of its number in decimal (a leading zero: 0 alone).
 */
function matchesSearch(text: string, asn: number, name: string | null): boolean {
  const lowered = text.toLowerCase();
  if (name !== null && lowered.length > 0 && !lowered.includes("\n") && name.toLowerCase().replaceAll("\n", " ").includes(lowered)) return true;
  const digits = /^(?:[Aa][Ss])?([0-9]{1,10})$/.exec(text)?.[1];
  if (digits === undefined) return false;
  if (digits.startsWith("0")) return digits === "0" && asn === 0;
  return String(asn).startsWith(digits);
}

const built = new WeakMap<CorrectionTable, WeakMap<AsnIndex, CorrectedAsns | null>>();

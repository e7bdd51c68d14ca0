import type { Address } from "../address/address.ts";
import { network128, network32 } from "../address/cidr.ts";
import { runPrefix128, runPrefix32, segmentPrefix128, segmentPrefix32 } from "../address/sorted-search.ts";
import type { RangeIndex } from "../index/range-index.ts";
import type { RecordField } from "../index/record-fields.ts";
import type { LayeredFields } from "./correction.ts";
import { correctedPrivacy, type PrivacyMembers } from "./corrected-privacy.ts";

/**
 * The network of a corrected answer (CONTRACT §1 with §15): the largest CIDR block
 * around the address on which every field of the answer, `privacy` included, is the
 * same, and which crosses no correction's edge.
 *
 * Inside the corrections' segment that holds the address (see CorrectionTable), one set
 * of corrected fields applies throughout, so two neighbouring data segments answer alike
 * there exactly when their records agree on every field the correction does not
 * decide; a data gap answers as a record of nulls whose privacy says no signal source
 * covers it (RangeIndex.notFoundBytes), found like any record once corrected. A
 * correction can so make data segments that differ answer the same, and the network is
 * then wider than the data's own: the largest block around the address inside the run
 * of equal neighbours, and inside the block at `minPrefix` (the largest around the
 * address inside the corrections' segment).
 *
 * Found by doubling: from the largest block around the address inside its data segment
 * and the corrections' segment, the block's parent is taken while it stays in the
 * segment and every data segment it reaches answers alike, walking out from the known
 * run only as far as the parent reaches and stopping at the first neighbour that
 * differs. The segments are compared by their values' ids in the image, never built
 * into answers. A walk reads the segments of the answer's network and some of one more
 * half; past WALK_BUDGET of them (a correction that makes a large block answer alike),
 * the whole run is found once, inside the block at `minPrefix`, and kept for the later
 * answers in it (see LongRuns). Addresses no correction covers do not come here
 * (lookup-service.ts).
 */
export function correctedPrefix(index: RangeIndex, address: Address, fields: LayeredFields, minPrefix: number): number {
  const image = index.image;
  const facts = factsOf(index);
  const i = index.segmentIndex(address);
  if (address.version === 4) {
    const starts = image.v4Starts;
    const records = image.v4Records;
    const value = address.value;
    const prefix = Math.max(segmentPrefix32(starts, i, value), minPrefix);
    if (prefix === minPrefix) return prefix;
    const first = network32(value, minPrefix);
    const block = facts.blockRuns(fields, first, minPrefix);
    let run = block?.find(i);
    if (run === undefined) {
      const same = sameAnswer(facts, records[i] as number, fields);
      const walked = widen32(starts, records, i, value, prefix, minPrefix, same);
      if (walked >= 0) return walked;
      const last = (first | (0xffffffff >>> minPrefix)) >>> 0;
      run = facts.addRun(fields, first, minPrefix, run32(starts, records, i, first, last, same));
    }
    return Math.max(minPrefix, runPrefix32(starts, run[0], run[1], value));
  }
  const starts = image.v6Starts;
  const records = image.v6Records;
  const words = address.words;
  const prefix = Math.max(segmentPrefix128(starts, i, words), minPrefix);
  if (prefix === minPrefix) return prefix;
  const [first, last] = block128(words, minPrefix);
  const key = first.join(":");
  const block = facts.blockRuns(fields, key, minPrefix);
  let run = block?.find(i);
  if (run === undefined) {
    const same = sameAnswer(facts, records[i] as number, fields);
    const walked = widen128(starts, records, i, words, prefix, minPrefix, same);
    if (walked >= 0) return walked;
    run = facts.addRun(fields, key, minPrefix, run128(starts, records, i, first, last, same));
  }
  return Math.max(minPrefix, runPrefix128(starts, run[0], run[1], words));
}

/**
 * How many neighbouring segments a walk compares before it leaves the rest to a long
 * run: some dozens of nanoseconds each, so a corrected answer stays within a few
 * microseconds of an uncorrected one whatever the correction.
 */
const WALK_BUDGET = 64;

/**
 * The doubling over IPv4 segments: segments `low`…`high` are known to answer alike, the
 * block at `prefix` inside them. -1 when WALK_BUDGET segments were compared first.
 */
function widen32(starts: Uint32Array, records: Uint32Array, i: number, value: number, prefix: number, minPrefix: number, same: (record: number) => boolean): number {
  const count = records.length;
  let low = i;
  let high = i;
  let budget = WALK_BUDGET;
  while (prefix > minPrefix) {
    const parent = prefix - 1;
    const first = network32(value, parent);
    const last = (first | (0xffffffff >>> parent)) >>> 0;
    while ((starts[low] as number) > first) {
      if (--budget < 0) return -1;
      if (!same(records[low - 1] as number)) return prefix;
      low--;
    }
    while (high + 1 < count && (starts[high + 1] as number) <= last) {
      if (--budget < 0) return -1;
      if (!same(records[high + 1] as number)) return prefix;
      high++;
    }
    prefix = parent;
  }
  return prefix;
}

/** The run of segments around segment `i` that answer alike, inside the addresses `first`…`last`: its first and last segment. */
function run32(starts: Uint32Array, records: Uint32Array, i: number, first: number, last: number, same: (record: number) => boolean): readonly [number, number] {
  let low = i;
  let high = i;
  while ((starts[low] as number) > first && same(records[low - 1] as number)) low--;
  while (high + 1 < records.length && (starts[high + 1] as number) <= last && same(records[high + 1] as number)) high++;
  return [low, high];
}

/** The first and last address of the block around `words` at `prefix`, as four words each. */
function block128(words: readonly number[], prefix: number): [Uint32Array, Uint32Array] {
  const network = network128(words, prefix);
  const first = new Uint32Array(4);
  const last = new Uint32Array(4);
  for (let w = 0; w < 4; w++) {
    const bits = Math.min(32, Math.max(0, prefix - w * 32));
    const host = bits === 32 ? 0 : 0xffffffff >>> bits;
    first[w] = network[w] as number;
    last[w] = ((network[w] as number) | host) >>> 0;
  }
  return [first, last];
}

/** widen32 for IPv6 segments (`i` counts addresses, not words). */
function widen128(starts: Uint32Array, records: Uint32Array, i: number, words: readonly number[], prefix: number, minPrefix: number, same: (record: number) => boolean): number {
  const count = records.length;
  let low = i;
  let high = i;
  let budget = WALK_BUDGET;
  while (prefix > minPrefix) {
    const parent = prefix - 1;
    const [first, last] = block128(words, parent);
    while (compareAt(starts, low * 4, first) > 0) {
      if (--budget < 0) return -1;
      if (!same(records[low - 1] as number)) return prefix;
      low--;
    }
    while (high + 1 < count && compareAt(starts, (high + 1) * 4, last) <= 0) {
      if (--budget < 0) return -1;
      if (!same(records[high + 1] as number)) return prefix;
      high++;
    }
    prefix = parent;
  }
  return prefix;
}

/** run32 for IPv6 segments. */
function run128(starts: Uint32Array, records: Uint32Array, i: number, first: Uint32Array, last: Uint32Array, same: (record: number) => boolean): readonly [number, number] {
  let low = i;
  let high = i;
  while (compareAt(starts, low * 4, first) > 0 && same(records[low - 1] as number)) low--;
  while (high + 1 < records.length && compareAt(starts, (high + 1) * 4, last) <= 0 && same(records[high + 1] as number)) high++;
  return [low, high];
}

/** How the start at `offset` compares with `words`: -1, 0 or 1. */
function compareAt(starts: Uint32Array, offset: number, words: Uint32Array): number {
  for (let w = 0; w < 4; w++) {
    const a = starts[offset + w] as number;
    const b = words[w] as number;
    if (a !== b) return a < b ? -1 : 1;
  }
  return 0;
}

// Which corrected field overrides a record's field (see OVERRIDDEN_BY).
const ASN = 1;
const AS_NAME = 2;
const COUNTRY = 4;
const CITY = 8;

/** The fields a correction's field decides whole: `country` and the continent follow `country_code` (applyFields). */
const OVERRIDDEN_BY: Partial<Record<RecordField, number>> = {
  asn: ASN,
  as_name: AS_NAME,
  country_code: COUNTRY,
  country: COUNTRY,
  continent_code: COUNTRY,
  continent: COUNTRY,
  city: CITY,
};

function overrides(fields: LayeredFields): number {
  return (fields.asn !== undefined ? ASN : 0) | (fields.as_name !== undefined ? AS_NAME : 0) | (fields.country_code !== undefined ? COUNTRY : 0) | (fields.city !== undefined ? CITY : 0);
}

/**
 * Whether a data segment's record answers as record `base` does under the corrected
 * `fields` (record 0: the data does not cover the segment): every field the correction
 * does not decide has the same value id, and the privacy laid over is the same (worked
 * out once per privacy value met: a data set has few).
 */
function sameAnswer(facts: RecordFacts, base: number, fields: LayeredFields): (record: number) => boolean {
  const mask = overrides(fields);
  const named = fields.privacy;
  const { width, privacyField, recordValues } = facts;
  // The fields compared by value id (all but those the correction decides, and privacy), and base's ids.
  const compared: number[] = [];
  for (let f = 0; f < width; f++) if (f !== privacyField && ((facts.overriddenBy[f] as number) & mask) === 0) compared.push(f);
  const ids = compared.map((f) => facts.valueId(base, f));
  const privacies = new Map<number, boolean>();
  return (record) => {
    if (record === base) return true;
    if (record === 0) {
      for (let k = 0; k < compared.length; k++) if (facts.valueId(0, compared[k] as number) !== ids[k]) return false;
    } else {
      const offset = (record - 1) * width;
      for (let k = 0; k < compared.length; k++) if (recordValues[offset + (compared[k] as number)] !== ids[k]) return false;
    }
    const id = record === 0 ? -1 : (recordValues[(record - 1) * width + privacyField] as number);
    let same = privacies.get(id);
    if (same === undefined) privacies.set(id, (same = facts.samePrivacy(base, record, named)));
    return same;
  };
}

/**
 * The long runs found in one block at `minPrefix` (see correctedPrefix), as first and
 * last data segment, sorted and disjoint: only runs a walk gave up on, so at most one
 * for every WALK_BUDGET segments of the block.
 */
class LongRuns {
  private readonly lows: number[] = [];
  private readonly highs: number[] = [];

  /** The run holding segment `i`, if one was found. */
  find(i: number): readonly [number, number] | undefined {
    const at = this.below(i) - 1;
    if (at >= 0 && (this.highs[at] as number) >= i) return [this.lows[at] as number, this.highs[at] as number];
    return undefined;
  }

  add(run: readonly [number, number]): void {
    const at = this.below(run[0]);
    this.lows.splice(at, 0, run[0]);
    this.highs.splice(at, 0, run[1]);
  }

  /** How many runs start at or below segment `i`. */
  private below(i: number): number {
    let low = 0;
    let high = this.lows.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if ((this.lows[mid] as number) <= i) low = mid + 1;
      else high = mid;
    }
    return low;
  }
}

/**
 * What comparing records needs of an index, put together on the first corrected answer
 * that walks (one per index: a reload's new index gets its own).
 */
class RecordFacts {
  readonly width: number;
  readonly recordValues: Uint32Array;
  readonly overriddenBy: Uint8Array;
  /** The field index of `privacy` (every index has it: files from before signals get one). */
  readonly privacyField: number;
  /** Per field, the id of its value `null`, what a gap answers (-1: the data has none; -2: not looked for yet). */
  private readonly nullIds: Int32Array;
  /** Privacy values by id, parsed when first compared. */
  private readonly privacies: (PrivacyMembers | undefined)[] = [];
  /** What a gap answers as privacy. */
  private readonly gapPrivacy: PrivacyMembers;
  private readonly values: readonly Uint8Array[];
  private readonly valueOffsets: readonly Uint32Array[];
  /**
   * The long runs found, per corrected fields and block: a run depends on nothing else
   * (the data is this index's), and a new correction table has new fields objects, so
   * what an old one found goes with it.
   */
  private readonly runs = new WeakMap<LayeredFields, Map<string, LongRuns>>();

  constructor(index: RangeIndex) {
    const { fields } = index.info;
    this.width = fields.length;
    this.recordValues = index.image.recordValues;
    this.values = index.image.values;
    this.valueOffsets = index.image.valueOffsets;
    this.overriddenBy = Uint8Array.from(fields, (field) => OVERRIDDEN_BY[field] ?? 0);
    this.privacyField = fields.indexOf("privacy");
    this.nullIds = new Int32Array(fields.length).fill(-2);
    this.gapPrivacy = { ...(index.notFoundRecord.privacy as unknown as PrivacyMembers) };
  }

  /** The long runs found in the block of `first` (a number, or IPv6 words joined) at `prefix` under `fields`, if any. */
  blockRuns(fields: LayeredFields, first: number | string, prefix: number): LongRuns | undefined {
    return this.runs.get(fields)?.get(`${first}/${prefix}`);
  }

  /** Keeps a long run found in that block; returns it. */
  addRun(fields: LayeredFields, first: number | string, prefix: number, run: readonly [number, number]): readonly [number, number] {
    let blocks = this.runs.get(fields);
    if (blocks === undefined) this.runs.set(fields, (blocks = new Map()));
    const key = `${first}/${prefix}`;
    let runs = blocks.get(key);
    if (runs === undefined) blocks.set(key, (runs = new LongRuns()));
    runs.add(run);
    return run;
  }

  /** The id of record `record`'s value of field `f`; for record 0 (a gap), that of `null`. */
  valueId(record: number, f: number): number {
    if (record !== 0) return this.recordValues[(record - 1) * this.width + f] as number;
    let id = this.nullIds[f] as number;
    if (id === -2) this.nullIds[f] = id = this.findNull(f);
    return id;
  }

  /** Whether two records say the same privacy once `named` (the covering corrections' `privacy`, if any) is laid over both. */
  samePrivacy(a: number, b: number, named: LayeredFields["privacy"]): boolean {
    const f = this.privacyField;
    if (a !== 0 && b !== 0 && this.valueId(a, f) === this.valueId(b, f)) return true;
    let x = this.privacyOf(a);
    let y = this.privacyOf(b);
    if (named !== undefined) {
      x = correctedPrivacy(x, named);
      y = correctedPrivacy(y, named);
    }
    for (const member in x) if (x[member] !== y[member]) return false;
    for (const member in y) if (!(member in x)) return false;
    return true;
  }

  private privacyOf(record: number): PrivacyMembers {
    if (record === 0) return this.gapPrivacy;
    const id = this.valueId(record, this.privacyField);
    let privacy = this.privacies[id];
    if (privacy === undefined) this.privacies[id] = privacy = JSON.parse(this.text(this.privacyField, id)) as PrivacyMembers;
    return privacy;
  }

  private findNull(f: number): number {
    const offsets = this.valueOffsets[f] as Uint32Array;
    const bytes = this.values[f] as Uint8Array;
    for (let id = 0; id + 1 < offsets.length; id++) {
      const start = offsets[id] as number;
      if ((offsets[id + 1] as number) - 1 - start !== 4) continue;
      if (bytes[start] === 0x6e && bytes[start + 1] === 0x75 && bytes[start + 2] === 0x6c && bytes[start + 3] === 0x6c) return id; // null
    }
    return -1;
  }

  private text(f: number, id: number): string {
    const offsets = this.valueOffsets[f] as Uint32Array;
    return decoder.decode((this.values[f] as Uint8Array).subarray(offsets[id] as number, (offsets[id + 1] as number) - 1));
  }
}

const decoder = new TextDecoder();
const facts = new WeakMap<RangeIndex, RecordFacts>();

function factsOf(index: RangeIndex): RecordFacts {
  let known = facts.get(index);
  if (known === undefined) facts.set(index, (known = new RecordFacts(index)));
  return known;
}

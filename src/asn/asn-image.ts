import { publicParts, publicSpans4, publicSpans6 } from "../address/classify.ts";
import { readAddress } from "../data-file/packed-address.ts";
import type { IndexImage } from "../index/range-index.ts";
import { asnHostingFlags } from "./hosting.ts";
import { Scratch } from "./scratch.ts";

/**
 * The AS index of one data set, in typed arrays over SharedArrayBuffers, like the range
 * index's image (and posted to worker threads with it, so every thread answers from one
 * copy). Built from the range index's segment tables in one walk; immutable once built.
 *
 * An AS here is an AS number that the lookups answer for at least one address: its
 * "slot" is its position among those numbers in ascending order. For each slot:
 * - its segments of each family, as indices into the range index's segment tables, in
 *   address order (`v4Segments[v4Offsets[s] … v4Offsets[s + 1])`, as varints: see
 *   segmentsBySlot): consecutive indices are touching segments, which is how prefixes
 *   are put together (see AsnIndex);
 * - the record that names it (the name most of its addresses answer) and the record of
 *   its country (the country of most of its IPv4 addresses; IPv6 when none of those has
 *   one), 0 when none;
 * - how many IPv4 addresses it holds, and how many IPv6 ones (a float: close enough to
 *   order by, which is all it is for);
 * - its place in the search's order (`ranked[r]` is the slot of rank r, `rankOf[s]` the
 *   rank of slot s): most IPv4 addresses first, then most IPv6 addresses, then the lower
 *   number;
 * - its name in lower case, for the search, in rank order (`names`, newline-separated
 *   UTF-8, rank r from `nameStarts[r]` to `nameStarts[r + 1] - 1`): a search finds the
 *   names it matches in the order it answers them, and stops at the first fifty;
 * - whether it is a hosting provider's (`hosting`: 1 or 0; null when the data was
 *   built without a list of hosting AS numbers, whatever hosting feeds it has).
 */
export interface AsnImage {
  readonly asns: Uint32Array;
  readonly v4Offsets: Uint32Array;
  readonly v4Segments: Uint8Array;
  readonly v6Offsets: Uint32Array;
  readonly v6Segments: Uint8Array;
  readonly nameRecords: Uint32Array;
  readonly countryRecords: Uint32Array;
  readonly v4Addresses: Float64Array;
  readonly v6Addresses: Float32Array;
  readonly ranked: Uint32Array;
  readonly rankOf: Uint32Array;
  readonly names: Uint8Array;
  readonly nameStarts: Uint32Array;
  readonly hosting: Uint8Array | null;
}

const decoder = new TextDecoder();
const encoder = new TextEncoder();

/**
 * Builds the AS index of a range index's image. Its working memory is typed arrays cut
 * from a few large buffers (see Scratch), given back whole once it is done; no object or
 * string is made per AS or record but for the few names that need decoding. A build
 * that made them left the server's RSS some 15 MiB higher than the index itself.
 */
export function buildAsnImage(image: IndexImage): AsnImage {
  const fields = image.info.fields;
  const fieldCount = fields.length;
  const records = image.info.records;
  const asnField = fields.indexOf("asn");
  const valueOf = (id: number, field: number) => image.recordValues[(id - 1) * fieldCount + field] as number;
  const scratch = new Scratch();

  // Addresses per record and family: what the AS's numbers and majorities are summed from.
  const v4PerRecord = scratch.f64(records + 1);
  forEachSegment4(image, (id, size) => (v4PerRecord[id] = (v4PerRecord[id] as number) + size));
  const v6Exact = exactV6PerRecord(image, scratch);
  /** Whether record `id` holds IPv6 addresses lookups answer (a count of them is never all-zero limbs). */
  const hasV6 = (id: number) => v6Exact[id * 4] !== 0 || v6Exact[id * 4 + 1] !== 0 || v6Exact[id * 4 + 2] !== 0 || v6Exact[id * 4 + 3] !== 0;

  // The slots: the AS numbers of records that some segment answers with, ascending.
  const asnOfValue = asnField >= 0 ? numberValues(image, asnField, scratch) : scratch.f64(0);
  const answered = scratch.u8(asnOfValue.length);
  if (asnField >= 0) {
    for (let id = 1; id <= records; id++) {
      const value = valueOf(id, asnField);
      if (((v4PerRecord[id] as number) > 0 || hasV6(id)) && !Number.isNaN(asnOfValue[value] as number)) answered[value] = 1;
    }
  }
  let count = 0;
  for (let v = 0; v < answered.length; v++) count += answered[v] as number;
  const numbers = scratch.f64(count);
  count = 0;
  for (let v = 0; v < answered.length; v++) if (answered[v] === 1) numbers[count++] = asnOfValue[v] as number;
  numbers.sort();
  const asns = sharedU32(numbers.length);
  asns.set(numbers);
  const slots = asns.length;
  const recordSlot = scratch.i32(records + 1).fill(-1);
  if (asnField >= 0) {
    const valueSlot = scratch.i32(asnOfValue.length).fill(-1);
    for (let v = 0; v < asnOfValue.length; v++) if (answered[v] === 1) valueSlot[v] = indexOf(asns, asnOfValue[v] as number);
    for (let id = 1; id <= records; id++) recordSlot[id] = valueSlot[valueOf(id, asnField)] as number;
  }

  const [v4Offsets, v4Segments] = segmentsBySlot(image, 4, recordSlot, slots, scratch);
  const [v6Offsets, v6Segments] = segmentsBySlot(image, 6, recordSlot, slots, scratch);
  const v4Addresses = new Float64Array(new SharedArrayBuffer(slots * 8));
  const v6Limbs = scratch.f64(slots * 4);
  for (let id = 1; id <= records; id++) {
    const slot = recordSlot[id] as number;
    if (slot < 0) continue;
    v4Addresses[slot] = (v4Addresses[slot] as number) + (v4PerRecord[id] as number);
    for (let w = 0; w < 4; w++) v6Limbs[slot * 4 + w] = (v6Limbs[slot * 4 + w] as number) + (v6Exact[id * 4 + w] as number);
  }
  // Each slot's exact count rounded to a double and then to a float32, as the corrected
  // answers round theirs (corrected-asns.ts): the two order a search alike, so a
  // correction that changes nothing moves no AS in it. (Summed in the float32 array,
  // every addition rounded, two ASes of one count, 2^99, came out unequal.)
  const v6Addresses = new Float32Array(new SharedArrayBuffer(slots * 4));
  for (let slot = 0; slot < slots; slot++) v6Addresses[slot] = Number(limbsValue(v6Limbs.subarray(slot * 4, slot * 4 + 4)));

  // Each slot's records, for the majorities.
  const recordOffsets = scratch.u32(slots + 1);
  for (let id = 1; id <= records; id++) {
    const slot = recordSlot[id] as number;
    if (slot >= 0) recordOffsets[slot + 1] = (recordOffsets[slot + 1] as number) + 1;
  }
  for (let s = 0; s < slots; s++) recordOffsets[s + 1] = (recordOffsets[s + 1] as number) + (recordOffsets[s] as number);
  const slotRecords = scratch.u32(recordOffsets[slots] as number);
  const fill = scratch.u32(slots);
  fill.set(recordOffsets.subarray(0, slots));
  for (let id = 1; id <= records; id++) {
    const slot = recordSlot[id] as number;
    if (slot < 0) continue;
    const at = fill[slot] as number;
    slotRecords[at] = id;
    fill[slot] = at + 1;
  }
  const bySlot: RecordsBySlot = { offsets: recordOffsets, records: slotRecords, v4: v4PerRecord, v6: v6Exact };
  const nameField = fields.indexOf("as_name");
  const nameRecords = majorityRecords(image, nameField, bySlot);
  const countryRecords = majorityRecords(image, fields.indexOf("country_code"), bySlot);

  const { ranked, rankOf } = searchOrder(asns, v4Addresses, v6Addresses);
  const { names, nameStarts } = lowerCaseNames(image, nameField, nameRecords, ranked);

  return {
    asns,
    v4Offsets,
    v4Segments,
    v6Offsets,
    v6Segments,
    nameRecords,
    countryRecords,
    v4Addresses,
    v6Addresses,
    ranked,
    rankOf,
    names,
    nameStarts,
    hosting: asnHostingFlags(image, asns),
  };
}

/** The slots in the search's order (see AsnImage), and each slot's rank in it. */
function searchOrder(asns: Uint32Array, v4Addresses: Float64Array, v6Addresses: Float32Array): { ranked: Uint32Array; rankOf: Uint32Array } {
  const ranked = sharedU32(asns.length);
  for (let slot = 0; slot < ranked.length; slot++) ranked[slot] = slot;
  ranked.sort(
    (a, b) =>
      (v4Addresses[b] as number) - (v4Addresses[a] as number) ||
      (v6Addresses[b] as number) - (v6Addresses[a] as number) ||
      (asns[a] as number) - (asns[b] as number),
  );
  const rankOf = sharedU32(asns.length);
  for (let rank = 0; rank < ranked.length; rank++) rankOf[ranked[rank] as number] = rank;
  return { ranked, rankOf };
}

/**
 * The AS names in lower case, newline-separated, in the search's order (see AsnImage). Most
 * names are ASCII JSON strings without escapes: their bytes are lowered as they are
 * copied. The others (non-ASCII, escapes) go through a string and toLowerCase. Every name
 * is a JSON string or null: loading the data file checked it (data-file/value-lines.ts). A string
 * (or several) for every name made the build's peak memory 40 MiB higher, which the
 * server kept as resident size.
 */
function lowerCaseNames(image: IndexImage, nameField: number, nameRecords: Uint32Array, ranked: Uint32Array): { names: Uint8Array; nameStarts: Uint32Array } {
  const slots = nameRecords.length;
  const fieldCount = image.info.fields.length;
  const nameStarts = sharedU32(slots + 1);
  const bytes = nameField >= 0 ? (image.values[nameField] as Uint8Array) : new Uint8Array(0);
  const starts = nameField >= 0 ? (image.valueOffsets[nameField] as Uint32Array) : new Uint32Array(0);
  /** Whether a name is a JSON string of ASCII without escapes, whose bytes can be lowered as they are. */
  const plain = (from: number, to: number) => {
    if (bytes[from] !== 0x22 || bytes[to - 1] !== 0x22) return false;
    for (let i = from + 1; i < to - 1; i++) if ((bytes[i] as number) >= 0x80 || bytes[i] === 0x5c) return false;
    return true;
  };
  const decoded = new Map<number, Uint8Array>();
  let length = 0;
  for (let rank = 0; rank < slots; rank++) {
    nameStarts[rank] = length;
    const slot = ranked[rank] as number;
    const id = nameRecords[slot] as number;
    if (id !== 0) {
      const value = image.recordValues[(id - 1) * fieldCount + nameField] as number;
      const from = starts[value] as number;
      const to = (starts[value + 1] as number) - 1;
      if (plain(from, to)) length += to - from - 2;
      else if (!isNull(image, nameField, value)) {
        const lowered = encoder.encode((JSON.parse(valueText(image, nameField, value)) as string).toLowerCase().replaceAll("\n", " "));
        decoded.set(slot, lowered);
        length += lowered.length;
      }
    }
    length += 1;
  }
  nameStarts[slots] = length;
  const names = new Uint8Array(new SharedArrayBuffer(length));
  for (let rank = 0; rank < slots; rank++) {
    let at = nameStarts[rank] as number;
    const slot = ranked[rank] as number;
    const lowered = decoded.get(slot);
    const id = nameRecords[slot] as number;
    if (lowered) {
      names.set(lowered, at);
      at += lowered.length;
    } else if (id !== 0) {
      const value = image.recordValues[(id - 1) * fieldCount + nameField] as number;
      const to = (starts[value + 1] as number) - 2;
      for (let i = (starts[value] as number) + 1; i < to; i++) {
        const byte = bytes[i] as number;
        names[at++] = byte >= 0x41 && byte <= 0x5a ? byte + 0x20 : byte;
      }
    }
    names[at] = 0x0a;
  }
  return { names, nameStarts };
}

/** Each record's AS number, by record id (NaN for a record without one, and for id 0), read from the data's values as the build reads them. */
export function recordAsnNumbers(image: IndexImage): Float64Array {
  const records = image.info.records;
  const numbers = new Float64Array(records + 1).fill(Number.NaN);
  const fields = image.info.fields;
  const field = fields.indexOf("asn");
  if (field < 0) return numbers;
  const values = numberValues(image, field, new Scratch());
  for (let id = 1; id <= records; id++) numbers[id] = values[image.recordValues[(id - 1) * fields.length + field] as number] as number;
  return numbers;
}

/** Value `value` of a field as its JSON text. */
export function valueText(image: IndexImage, field: number, value: number): string {
  const starts = image.valueOffsets[field] as Uint32Array;
  return decoder.decode((image.values[field] as Uint8Array).subarray(starts[value] as number, (starts[value + 1] as number) - 1));
}

/** Whether value `value` of a field is JSON null. */
function isNull(image: IndexImage, field: number, value: number): boolean {
  const starts = image.valueOffsets[field] as Uint32Array;
  const bytes = image.values[field] as Uint8Array;
  const at = starts[value] as number;
  return (starts[value + 1] as number) - 1 - at === 4 && bytes[at] === 0x6e && bytes[at + 1] === 0x75 && bytes[at + 2] === 0x6c && bytes[at + 3] === 0x6c;
}

/** A numeric field's values as whole numbers (NaN for null or anything else), read from their digits. */
function numberValues(image: IndexImage, field: number, scratch: Scratch): Float64Array {
  const starts = image.valueOffsets[field] as Uint32Array;
  const bytes = image.values[field] as Uint8Array;
  const numbers = scratch.f64(starts.length - 1);
  for (let v = 0; v < numbers.length; v++) {
    let n = 0;
    let digits = 0;
    for (let i = starts[v] as number; i < (starts[v + 1] as number) - 1; i++) {
      const digit = (bytes[i] as number) - 0x30;
      if (digit < 0 || digit > 9) {
        digits = -1;
        break;
      }
      n = n * 10 + digit;
      digits++;
    }
    numbers[v] = digits > 0 ? n : Number.NaN;
  }
  return numbers;
}

/** The index of `value` in the ascending `values`, where it is. */
function indexOf(values: Uint32Array, value: number): number {
  let low = 0;
  let high = values.length - 1;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((values[middle] as number) < value) low = middle + 1;
    else high = middle;
  }
  return low;
}

/**
 * Calls `visit(record, addresses)` for each IPv4 segment that some record answers for,
 * with the addresses of it that lookups answer: the public ones (CONTRACT §2; a segment
 * of the data may hold a block that lookups refuse, 192.88.99.2 in one of AS6939's).
 * IPv6 segments are counted by exactV6PerRecord.
 */
function forEachSegment4(image: IndexImage, visit: (record: number, addresses: number) => void): void {
  const starts = image.v4Starts;
  const records = image.v4Records;
  const isPublicSpan4 = publicSpans4();
  for (let i = 0; i < records.length; i++) {
    const id = records[i] as number;
    if (id === 0) continue;
    const start = starts[i] as number;
    const end = i + 1 < starts.length ? (starts[i + 1] as number) : 2 ** 32;
    visit(id, isPublicSpan4(start, end) ? end - start : Number(publicCount(32, BigInt(start), BigInt(end - 1))));
  }
}

/** How many addresses of `first`…`last` are public. */
function publicCount(bits: 32 | 128, first: bigint, last: bigint): bigint {
  let count = 0n;
  for (const [start, end] of publicParts(bits, first, last)) count += end - start + 1n;
  return count;
}

/** 2^128 as words (the first one past 32 bits): where the last IPv6 segment ends. */
const PAST_LAST = new Float64Array([2 ** 32, 0, 0, 0]);

/**
 * Each slot's segments of a family in address order, as [offsets, bytes]: slot s's
 * segment indices are `bytes[offsets[s] … offsets[s + 1])`, the first as it is and each
 * next as its difference to the one before, each a LEB128 varint (7 bits a byte, the
 * high bit set on every byte but a number's last). Touching segments differ by 1, one
 * byte: the default data's 804,000 segments take 1.4 MiB instead of 3.1 as 32-bit
 * indices. See `forEachRun` (asn-index.ts) for the reading.
 */
function segmentsBySlot(image: IndexImage, family: 4 | 6, recordSlot: Int32Array, slots: number, scratch: Scratch): [Uint32Array, Uint8Array] {
  const records = family === 4 ? image.v4Records : image.v6Records;
  const offsets = sharedU32(slots + 1);
  const previous = scratch.i32(slots).fill(-1);
  for (let i = 0; i < records.length; i++) {
    const slot = recordSlot[records[i] as number] as number;
    if (slot < 0) continue;
    const before = previous[slot] as number;
    offsets[slot + 1] = (offsets[slot + 1] as number) + varintLength(before < 0 ? i : i - before);
    previous[slot] = i;
  }
  for (let s = 0; s < slots; s++) offsets[s + 1] = (offsets[s + 1] as number) + (offsets[s] as number);
  const bytes = new Uint8Array(new SharedArrayBuffer(offsets[slots] as number));
  const next = scratch.u32(slots);
  next.set(offsets.subarray(0, slots));
  previous.fill(-1);
  for (let i = 0; i < records.length; i++) {
    const slot = recordSlot[records[i] as number] as number;
    if (slot < 0) continue;
    const before = previous[slot] as number;
    let value = before < 0 ? i : i - before;
    let at = next[slot] as number;
    while (value >= 0x80) {
      bytes[at++] = (value & 0x7f) | 0x80;
      value >>>= 7;
    }
    bytes[at++] = value;
    next[slot] = at;
    previous[slot] = i;
  }
  return [offsets, bytes];
}

function varintLength(value: number): number {
  return value < 0x80 ? 1 : value < 0x4000 ? 2 : value < 0x200000 ? 3 : value < 0x10000000 ? 4 : 5;
}

/**
 * Each slot's records (`records[offsets[s] … offsets[s + 1])`), with every record's IPv4
 * addresses and its IPv6 addresses as four limbs (see exactV6PerRecord).
 */
interface RecordsBySlot {
  readonly offsets: Uint32Array;
  readonly records: Uint32Array;
  readonly v4: Float64Array;
  readonly v6: Float64Array;
}

/**
 * Every record's public IPv6 addresses, counted exactly, as four limbs a record
 * (`limbs[id * 4 + w]`, worth 2^(96 - 32w) each): sums of the 32-bit word differences of
 * its segments' bounds. Each limb stays a whole number under 2^53, so a double holds it
 * exactly, where one double for the count would lose the addresses that decide a
 * majority (2^80 + 1 against 2^80); compare them with compareLimbs. The corrected AS
 * answers count in BigInt, and the two must agree.
 */
function exactV6PerRecord(image: IndexImage, scratch: Scratch): Float64Array {
  const limbs = scratch.f64((image.info.records + 1) * 4);
  const starts = image.v6Starts;
  const records = image.v6Records;
  const isPublicSpan6 = publicSpans6();
  for (let i = 0; i < records.length; i++) {
    const id = records[i] as number;
    if (id === 0) continue;
    const hasNext = i + 1 < records.length;
    const at = id * 4;
    if (isPublicSpan6(starts, i * 4, hasNext ? i * 4 + 4 : -1)) {
      const end: ArrayLike<number> = hasNext ? starts : PAST_LAST;
      const endAt = hasNext ? i * 4 + 4 : 0;
      for (let w = 0; w < 4; w++) limbs[at + w] = (limbs[at + w] as number) + (end[endAt + w] as number) - (starts[i * 4 + w] as number);
    } else {
      const count = publicCount(128, readAddress(starts, 4, i * 4), hasNext ? readAddress(starts, 4, i * 4 + 4) - 1n : (1n << 128n) - 1n);
      for (let w = 0; w < 4; w++) limbs[at + w] = (limbs[at + w] as number) + Number((count >> BigInt(96 - 32 * w)) & 0xffffffffn);
    }
  }
  return limbs;
}

/** Carries a count's four limbs (see exactV6PerRecord) so that the low three lie in 0…2^32 - 1, in place. */
function carryLimbs(limbs: Float64Array): void {
  for (let w = 3; w > 0; w--) {
    const carry = Math.floor((limbs[w] as number) / 2 ** 32);
    limbs[w] = (limbs[w] as number) - carry * 2 ** 32;
    limbs[w - 1] = (limbs[w - 1] as number) + carry;
  }
}

/** A count's four limbs (see exactV6PerRecord) as one number, carried in place first. */
function limbsValue(limbs: Float64Array): bigint {
  if (limbs[0] === 0 && limbs[1] === 0 && limbs[2] === 0 && limbs[3] === 0) return 0n;
  carryLimbs(limbs);
  return (BigInt(limbs[0] as number) << 96n) + (BigInt(limbs[1] as number) << 64n) + (BigInt(limbs[2] as number) << 32n) + BigInt(limbs[3] as number);
}

/** How two carried counts compare: negative, zero or positive. */
function compareLimbs(a: Float64Array, b: Float64Array): number {
  for (let w = 0; w < 4; w++) if (a[w] !== b[w]) return (a[w] as number) - (b[w] as number);
  return 0;
}

/**
 * Per slot, a record holding the value of `field` that most of the AS's IPv4 addresses
 * answer (IPv6 when none of its IPv4 addresses has a value), 0 when none has one. A tie
 * goes to the value with more IPv6 addresses (counted exactly), then to the one whose text sorts first, so
 * the answer never depends on the order of the data file. An AS has few records (one per name and country it answers), so each
 * value's addresses are summed over the slot's records directly.
 */
function majorityRecords(image: IndexImage, field: number, bySlot: RecordsBySlot): Uint32Array {
  const slots = bySlot.offsets.length - 1;
  const chosen = sharedU32(slots);
  if (field < 0) return chosen;
  const fieldCount = image.info.fields.length;
  const valueOf = (id: number) => image.recordValues[(id - 1) * fieldCount + field] as number;
  const v6 = new Float64Array(4);
  for (let slot = 0; slot < slots; slot++) {
    const from = bySlot.offsets[slot] as number;
    const to = bySlot.offsets[slot + 1] as number;
    let best = 0;
    let bestV4 = 0;
    const bestV6 = new Float64Array(4);
    for (let i = from; i < to; i++) {
      const id = bySlot.records[i] as number;
      const value = valueOf(id);
      if (isNull(image, field, value)) continue;
      // A value's addresses are summed at its first record only.
      let first = true;
      for (let j = from; j < i && first; j++) if (valueOf(bySlot.records[j] as number) === value) first = false;
      if (!first) continue;
      let v4 = 0;
      v6.fill(0);
      for (let j = i; j < to; j++) {
        const other = bySlot.records[j] as number;
        if (valueOf(other) !== value) continue;
        v4 += bySlot.v4[other] as number;
        for (let w = 0; w < 4; w++) v6[w] = (v6[w] as number) + (bySlot.v6[other * 4 + w] as number);
      }
      carryLimbs(v6);
      // A value whose records hold no address lookups answer (a block lookups refuse) is no one's majority.
      if (v4 === 0 && v6[0] === 0 && v6[1] === 0 && v6[2] === 0 && v6[3] === 0) continue;
      const byV6 = compareLimbs(v6, bestV6);
      const wins = best === 0 || (v4 !== bestV4 ? v4 > bestV4 : byV6 !== 0 ? byV6 > 0 : valueText(image, field, value) < valueText(image, field, valueOf(best)));
      if (wins) {
        best = id;
        bestV4 = v4;
        bestV6.set(v6);
      }
    }
    chosen[slot] = best;
  }
  return chosen;
}

function sharedU32(length: number): Uint32Array {
  return new Uint32Array(new SharedArrayBuffer(Math.max(length, 0) * 4));
}

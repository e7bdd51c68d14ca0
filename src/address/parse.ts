import type { Address, IPv4Address } from "./address.ts";

/**
 * The strict address parser of CONTRACT §2. It accepts exactly:
 * - IPv4: four decimal parts 0–255 without leading zeros;
 * - IPv6: the RFC 4291 text forms (`::` at most once, 1–4 hex digits a group, any case,
 *   an embedded dotted IPv4 in the last 32 bits);
 * and nothing else: no `127.1`, `0x7f.0.0.1`, `010.1.1.1`, integers, whitespace, zone
 * index, brackets, port or prefix. General-purpose parsers (ipaddr.js, inet_aton) read
 * the legacy forms as some other address; this one refuses them, so a lookup can never
 * answer for an address the caller did not write.
 *
 * It is a single pass over char codes with no regular expressions, as it runs on every
 * entry of every request.
 */
export function parseAddress(text: string): Address | null {
  const length = text.length;
  if (length === 0 || length > 45) return null;
  // The first separator decides the family: a valid IPv6 text has a colon before any dot
  // (an embedded IPv4 comes last), within its first five characters (groups have at
  // most four digits); a valid IPv4 text has a dot there and no colon at all.
  const scan = length < 5 ? length : 5;
  for (let i = 0; i < scan; i++) {
    const c = text.charCodeAt(i);
    if (c === COLON) return parseIPv6(text);
    if (c === DOT) break;
  }
  const value = parseIPv4Value(text, 0, length);
  return value < 0 ? null : ipv4(value, text);
}

const COLON = 58;
const DOT = 46;
const ZERO = 48;
const NINE = 57;
/** The flag HEX_VALUES adds to an upper case digit's value. */
const UPPER_CASE = 16;

function ipv4(value: number, text?: string): IPv4Address {
  return { version: 4, text: text ?? ipv4Text(value), value };
}

/** Decimal text of 0…255, so writing an address formats no numbers. */
const OCTETS = Array.from({ length: 256 }, (_, i) => String(i));

/** Dotted-quad text of an unsigned 32-bit value. */
export function ipv4Text(value: number): string {
  return `${OCTETS[value >>> 24]}.${OCTETS[(value >>> 16) & 255]}.${OCTETS[(value >>> 8) & 255]}.${OCTETS[value & 255]}`;
}

/** Reads text[start, end) as a strict dotted quad; returns the value, or -1. */
function parseIPv4Value(text: string, start: number, end: number): number {
  let value = 0;
  let parts = 0;
  let i = start;
  while (parts < 4) {
    const partStart = i;
    let part = 0;
    while (i < end) {
      const c = text.charCodeAt(i);
      if (c < ZERO || c > NINE) break;
      part = part * 10 + (c - ZERO);
      i++;
    }
    const digits = i - partStart;
    if (digits === 0 || digits > 3 || part > 255) return -1;
    if (digits > 1 && text.charCodeAt(partStart) === ZERO) return -1;
    value = value * 256 + part;
    parts++;
    if (parts < 4) {
      if (i >= end || text.charCodeAt(i) !== DOT) return -1;
      i++;
    }
  }
  return i === end ? value : -1;
}

/**
 * Each hex digit character's value, by char code below 128: 0–15 for a digit or a lower
 * case letter, the value plus UPPER_CASE for an upper case letter, -1 for any other.
 */
const HEX_VALUES = (() => {
  const values = new Int8Array(128).fill(-1);
  for (let d = 0; d < 10; d++) values[ZERO + d] = d;
  for (let d = 0; d < 6; d++) {
    values[97 + d] = 10 + d;
    values[65 + d] = (10 + d) | UPPER_CASE;
  }
  return values;
})();

/** Lower-case hex of 0…255, without and with a leading zero. */
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16));
const HEX2 = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

function hexGroup(group: number): string {
  const high = group >>> 8;
  return high === 0 ? (HEX[group] as string) : (HEX[high] as string) + (HEX2[group & 255] as string);
}

// Scratch space for the single-threaded parser: filled and read within one call.
const GROUPS = new Uint16Array(8);
const TEXT_GROUPS = new Uint16Array(8);

/** Parses an IPv6 text; an IPv4-mapped address comes back as its IPv4 address. */
function parseIPv6(text: string): Address | null {
  const length = text.length;
  const groups = GROUPS;
  let count = 0;
  let gap = -1; // index in `groups` where `::` stands
  // Whether every group is written as RFC 5952 writes it (lower case, no leading zero);
  // finishIPv6 then checks where `::` stands and, if that is right too, keeps `text`.
  let plain = true;
  let i = 0;
  // Every digit's HEX_VALUES entry OR-ed together: UPPER_CASE in it once one was upper case.
  let seen = 0;
  if (text.charCodeAt(0) === COLON) {
    if (text.charCodeAt(1) !== COLON) return null;
    gap = 0;
    i = 2;
    if (i === length) return finishIPv6(count, gap, text);
  }
  for (;;) {
    const groupStart = i;
    let group = 0;
    while (i < length) {
      const c = text.charCodeAt(i);
      const digit = c < 128 ? (HEX_VALUES[c] as number) : -1;
      if (digit < 0) break;
      seen |= digit;
      group = (group << 4) | (digit & 15);
      i++;
    }
    const digits = i - groupStart;
    if (i < length && text.charCodeAt(i) === DOT) {
      // An embedded IPv4 address: only as the last 32 bits, parsed strictly.
      if (count > 6) return null;
      const value = parseIPv4Value(text, groupStart, length);
      if (value < 0) return null;
      groups[count++] = value >>> 16;
      groups[count++] = value & 0xffff;
      return finishIPv6(count, gap, null);
    }
    if (digits === 0 || digits > 4 || count === 8) return null;
    if (digits > 1 && text.charCodeAt(groupStart) === ZERO) plain = false;
    groups[count++] = group;
    if (i === length) return finishIPv6(count, gap, plain && (seen & UPPER_CASE) === 0 ? text : null);
    if (text.charCodeAt(i) !== COLON) return null;
    i++;
    if (text.charCodeAt(i) === COLON) {
      if (gap >= 0) return null;
      gap = count;
      i++;
      if (i === length) return finishIPv6(count, gap, plain && (seen & UPPER_CASE) === 0 ? text : null);
    }
  }
}

/**
 * The `count` groups in GROUPS, with `::` standing at `gap` (or -1), as an address.
 * `plainText` is the text parsed when its groups are written the RFC 5952 way: it is
 * the address's canonical text as is if `::` also stands where RFC 5952 puts it, which
 * saves formatting it again (most clients send canonical text).
 */
function finishIPv6(count: number, gap: number, plainText: string | null): Address | null {
  if (gap < 0 ? count !== 8 : count > 7) return null;
  const groups = GROUPS;
  if (gap >= 0) {
    // Move the groups after `::` to the end and zero the gap.
    const tail = count - gap;
    for (let g = tail - 1; g >= 0; g--) groups[8 - tail + g] = groups[gap + g] as number;
    for (let g = gap; g < 8 - tail; g++) groups[g] = 0;
  }
  const w0 = (((groups[0] as number) << 16) | (groups[1] as number)) >>> 0;
  const w1 = (((groups[2] as number) << 16) | (groups[3] as number)) >>> 0;
  const w2 = (((groups[4] as number) << 16) | (groups[5] as number)) >>> 0;
  const w3 = (((groups[6] as number) << 16) | (groups[7] as number)) >>> 0;
  if (w0 === 0 && w1 === 0 && w2 === 0xffff) return ipv4(w3);
  const words = [w0, w1, w2, w3] as const;
  return { version: 6, text: plainText !== null && compressedAsCanonical(groups, gap, 8 - count) ? plainText : ipv6Text(words), words };
}

/**
 * Whether `::` standing at `gap` for `zeros` groups (gap -1: no `::`) is where RFC 5952
 * puts it in these eight groups (see zeroRun).
 */
function compressedAsCanonical(groups: Uint16Array, gap: number, zeros: number): boolean {
  const [start, length] = zeroRun(groups);
  return gap < 0 ? start < 0 : gap === start && zeros === length;
}

/**
 * RFC 5952 text of 128 bits given as four 32-bit words: lower-case hex without leading
 * zeros, the longest run of two or more zero groups (the first, on a tie) as `::`.
 */
export function ipv6Text(words: ArrayLike<number>): string {
  const groups = TEXT_GROUPS;
  const [bestStart, bestLength] = groupsAndZeroRun(words, groups);
  let text = "";
  let separate = false;
  for (let g = 0; g < 8; g++) {
    if (g === bestStart) {
      text += "::";
      separate = false;
      g += bestLength - 1;
      continue;
    }
    if (separate) text += ":";
    text += hexGroup(groups[g] as number);
    separate = true;
  }
  return text;
}

const ZERO_RUN: [start: number, length: number] = [-1, 1];

/**
 * Splits four 32-bit words into eight 16-bit groups (into `groups`) and finds where
 * RFC 5952 text puts `::` (see zeroRun).
 */
export function groupsAndZeroRun(words: ArrayLike<number>, groups: Uint16Array): readonly [start: number, length: number] {
  for (let w = 0; w < 4; w++) {
    const word = words[w] as number;
    groups[w * 2] = word >>> 16;
    groups[w * 2 + 1] = word & 0xffff;
  }
  return zeroRun(groups);
}

/**
 * Where RFC 5952 text of eight 16-bit groups puts `::`: the longest run of two or more
 * zero groups, the first on a tie; start -1 when there is none. The pair returned is
 * reused by the next call.
 */
function zeroRun(groups: Uint16Array): readonly [start: number, length: number] {
  let bestStart = -1;
  let bestLength = 1;
  for (let g = 0; g < 8; ) {
    if (groups[g] !== 0) {
      g++;
      continue;
    }
    let end = g + 1;
    while (end < 8 && groups[end] === 0) end++;
    if (end - g > bestLength) {
      bestStart = g;
      bestLength = end - g;
    }
    g = end;
  }
  ZERO_RUN[0] = bestStart;
  ZERO_RUN[1] = bestLength;
  return ZERO_RUN;
}

import type { Address, IPv4Address, IPv6Address } from "./address.ts";

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
  for (let i = 0; i < length; i++) {
    if (text.charCodeAt(i) === COLON) return parseIPv6(text);
  }
  const value = parseIPv4Value(text, 0, length);
  return value < 0 ? null : ipv4(value, text);
}

const COLON = 58;
const DOT = 46;
const ZERO = 48;
const NINE = 57;

function ipv4(value: number, text?: string): IPv4Address {
  return { version: 4, text: text ?? ipv4Text(value), value };
}

/** Dotted-quad text of an unsigned 32-bit value. */
export function ipv4Text(value: number): string {
  return `${value >>> 24}.${(value >>> 16) & 255}.${(value >>> 8) & 255}.${value & 255}`;
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

function hexValue(c: number): number {
  if (c >= ZERO && c <= NINE) return c - ZERO;
  const lower = c | 0x20;
  if (lower >= 97 && lower <= 102) return lower - 87;
  return -1;
}

/** Parses an IPv6 text; an IPv4-mapped address comes back as its IPv4 address. */
function parseIPv6(text: string): Address | null {
  const length = text.length;
  const groups = new Array<number>(8);
  let count = 0;
  let gap = -1; // index in `groups` where `::` stands
  let i = 0;
  if (text.charCodeAt(0) === COLON) {
    if (text.charCodeAt(1) !== COLON) return null;
    gap = 0;
    i = 2;
    if (i === length) return finishIPv6(groups, count, gap);
  }
  for (;;) {
    const groupStart = i;
    let group = 0;
    while (i < length) {
      const digit = hexValue(text.charCodeAt(i));
      if (digit < 0) break;
      group = group * 16 + digit;
      i++;
    }
    const digits = i - groupStart;
    if (i < length && text.charCodeAt(i) === DOT) {
      // An embedded IPv4 address: only as the last 32 bits, parsed strictly.
      if (count > 6) return null;
      const value = parseIPv4Value(text, groupStart, length);
      if (value < 0) return null;
      groups[count++] = Math.floor(value / 65536);
      groups[count++] = value % 65536;
      return finishIPv6(groups, count, gap);
    }
    if (digits === 0 || digits > 4 || count === 8) return null;
    groups[count++] = group;
    if (i === length) return finishIPv6(groups, count, gap);
    if (text.charCodeAt(i) !== COLON) return null;
    i++;
    if (text.charCodeAt(i) === COLON) {
      if (gap >= 0) return null;
      gap = count;
      i++;
      if (i === length) return finishIPv6(groups, count, gap);
    }
  }
}

function finishIPv6(groups: number[], count: number, gap: number): Address | null {
  if (gap < 0 ? count !== 8 : count > 7) return null;
  const full = new Array<number>(8).fill(0);
  const tail = gap < 0 ? 0 : count - gap;
  for (let g = 0; g < count - tail; g++) full[g] = groups[g] as number;
  for (let g = 0; g < tail; g++) full[8 - tail + g] = groups[gap + g] as number;
  const words = [
    ((full[0] as number) * 65536 + (full[1] as number)) >>> 0,
    ((full[2] as number) * 65536 + (full[3] as number)) >>> 0,
    ((full[4] as number) * 65536 + (full[5] as number)) >>> 0,
    ((full[6] as number) * 65536 + (full[7] as number)) >>> 0,
  ] as const;
  if (words[0] === 0 && words[1] === 0 && words[2] === 0xffff) return ipv4(words[3]);
  return ipv6(words);
}

function ipv6(words: readonly [number, number, number, number]): IPv6Address {
  return { version: 6, text: ipv6Text(words), words };
}

/**
 * RFC 5952 text of 128 bits given as four 32-bit words: lower-case hex without leading
 * zeros, the longest run of two or more zero groups (the first, on a tie) as `::`.
 */
export function ipv6Text(words: readonly number[]): string {
  const groups: number[] = [];
  for (const word of words) groups.push(word >>> 16, word & 0xffff);
  let bestStart = -1;
  let bestLength = 1;
  for (let g = 0; g < 8; ) {
    if (groups[g] !== 0) {
      g++;
      continue;
    }
    let end = g;
    while (end < 8 && groups[end] === 0) end++;
    if (end - g > bestLength) {
      bestStart = g;
      bestLength = end - g;
    }
    g = end;
  }
  const hex = (from: number, to: number) =>
    groups
      .slice(from, to)
      .map((group) => group.toString(16))
      .join(":");
  if (bestStart < 0) return hex(0, 8);
  return `${hex(0, bestStart)}::${hex(bestStart + bestLength, 8)}`;
}

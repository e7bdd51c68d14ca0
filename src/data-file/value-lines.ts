import { isUtf8 } from "node:buffer";
import { lastStartAtOrBelow32 } from "../address/sorted-search.ts";
import { privacyOf, SIGNALS, type Privacy } from "../index/privacy.ts";
import type { RecordField } from "../index/record-fields.ts";
import { damaged } from "./checksums.ts";

/**
 * The check of a data file's values:FIELD tables (layout.ts): every line is one JSON
 * value, with no space around it, of the type its field holds (record-fields.ts):
 *
 *   asn                    an integer 0–4294967295, as digits (no sign, fraction or
 *                          exponent; what the AS index reads), or null
 *   latitude, longitude    a number, or null
 *   privacy                an object as privacyOf makes it and JSON.stringify writes it
 *   every other field      a string, or null
 *
 * and the table is UTF-8. Lookups copy these lines into answers as they are, and the AS
 * index reads them as it finds them, so a file whose lines are not so is refused: its
 * checksums only say it is the file that was written, not that iplookup wrote it.
 *
 * Exact, and cheap enough to run on every load (5 ms on the default data, 18 ms on city
 * data): a JSON.parse a line took five to ten times as long (hundreds of thousands of
 * lines with city data), and a walk over every byte in JavaScript, run once and cold as a
 * load runs it, about three times. So each table is checked as UTF-8 whole, then read as
 * Latin-1 text, a character a byte, by regular expressions, which are compiled before
 * they run: every character JSON's grammar names is ASCII, and in UTF-8 no byte of a
 * longer character is. A loop a line checks how strings begin and end. Privacy objects
 * are few and are parsed.
 */
export function checkValueLines(field: RecordField, bytes: Uint8Array, starts: Uint32Array): void {
  const lines = starts.length - 1;
  if (lines === 0) return;
  if (!isUtf8(bytes)) {
    for (let line = 0; line < lines; line++) {
      if (!isUtf8(bytes.subarray(starts[line] as number, (starts[line + 1] as number) - 1))) throw notValue(field, line, "UTF-8 text");
    }
  }
  const kind = KINDS[field] ?? "string";
  const bad = kind === "privacy" ? badPrivacy(bytes, starts) : lineAt(starts, kind === "string" ? badString(bytes, starts) : badNumber(latin1(bytes), kind === "asn"));
  if (bad >= 0) throw notValue(field, bad, WHAT[kind]);
}

type Kind = "string" | "number" | "asn" | "privacy";

const KINDS: Partial<Record<RecordField, Kind>> = { asn: "asn", latitude: "number", longitude: "number", privacy: "privacy" };

const WHAT: Record<Kind, string> = {
  string: "a JSON string or null",
  number: "a JSON number or null",
  asn: "an AS number (an integer 0–4294967295) or null",
  privacy: "a privacy object as iplookup writes it",
};

function notValue(field: RecordField, line: number, what: string): Error {
  return damaged(`line ${line + 1} of its values:${field} table is not ${what}`);
}

/** The bytes as text, a character a byte. */
function latin1(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");
}

/** The line that byte `at` is on (-1 for -1): the last line start at or below it (`starts` ends with the end of the last line). */
function lineAt(starts: Uint32Array, at: number): number {
  return at < 0 ? -1 : lastStartAtOrBelow32(starts, at, 0, starts.length - 2);
}

/**
 * In a table of strings: escapes, which the search steps over (so `\\"` is a backslash,
 * then a closing quote), and what no string holds (group 1): a control character, a
 * quote that neither begins nor ends its line, a backslash that begins no escape.
 */
const STRING_INSIDE = /\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})|([\x00-\x09\x0b-\x1f]|(?<=[^\n])"(?=[^\n])|\\)/g;

/**
 * Where the first line that is not a JSON string (RFC 8259 §7) or null goes wrong, or
 * -1: each line `null`, or a quote, what STRING_INSIDE takes, and a quote that no escape
 * took.
 */
function badString(bytes: Uint8Array, starts: Uint32Array): number {
  let at = -1;
  const lines = starts.length - 1;
  for (let line = 0; line < lines; line++) {
    const from = starts[line] as number;
    const last = (starts[line + 1] as number) - 2;
    if (bytes[from] === 0x22 ? last > from && bytes[last] === 0x22 : isNull(bytes, from, last + 1)) continue;
    at = from;
    break;
  }
  const text = latin1(bytes);
  STRING_INSIDE.lastIndex = 0;
  for (let match = STRING_INSIDE.exec(text); match !== null && (at < 0 || match.index < at); match = STRING_INSIDE.exec(text)) {
    if (match[1] !== undefined) return match.index;
    // `\"` at a line's end took its closing quote.
    const end = match.index + match[0].length;
    if (match[0] === '\\"' && (end === text.length || text.charCodeAt(end) === 0x0a)) return match.index;
  }
  return at;
}

function isNull(bytes: Uint8Array, from: number, to: number): boolean {
  return to - from === 4 && bytes[from] === 0x6e && bytes[from + 1] === 0x75 && bytes[from + 2] === 0x6c && bytes[from + 3] === 0x6c;
}

/** The start of the first line that is not a JSON number (RFC 8259 §6) or null. */
const BAD_NUMBER = /(?:^|\n)(?!(?:-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|null)(?:\n|$))/;
/** The start of the first line that is not `0`, up to 10 digits without a leading zero, or null. */
const BAD_ASN = /(?:^|\n)(?!(?:0|[1-9][0-9]{0,9}|null)(?:\n|$))/;
/** Lines of 10 digits: AS numbers above 4294967295 among them. */
const TEN_DIGITS = /(?:^|\n)([0-9]{10})(?=\n|$)/g;

/** Where the first line that is not a number (with `asn`, an AS number) or null begins, or -1. */
function badNumber(text: string, asn: boolean): number {
  const found = (asn ? BAD_ASN : BAD_NUMBER).exec(text);
  const at = found === null ? -1 : found.index + found[0].length;
  if (asn) {
    TEN_DIGITS.lastIndex = 0;
    for (let match = TEN_DIGITS.exec(text); match !== null && (at < 0 || match.index < at); match = TEN_DIGITS.exec(text)) {
      if (Number(match[1]) > 0xffffffff) return match.index + match[0].length - 10;
    }
  }
  return at;
}

const decoder = new TextDecoder();

/** The first line that is not the JSON.stringify of a Privacy (its members in order, each of its type), or -1. */
function badPrivacy(bytes: Uint8Array, starts: Uint32Array): number {
  const lines = starts.length - 1;
  for (let line = 0; line < lines; line++) {
    const text = decoder.decode(bytes.subarray(starts[line] as number, (starts[line + 1] as number) - 1));
    if (!isPrivacyText(text)) return line;
  }
  return -1;
}

function isPrivacyText(text: string): boolean {
  let parsed: Partial<Record<keyof Privacy, unknown>>;
  try {
    parsed = JSON.parse(text) as Partial<Record<keyof Privacy, unknown>>;
  } catch {
    return false;
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return false;
  const signals: Partial<Record<(typeof SIGNALS)[number], boolean | null>> = {};
  for (const signal of SIGNALS) {
    const value = parsed[signal];
    if (value !== null && typeof value !== "boolean") return false;
    signals[signal] = value;
  }
  const service = parsed.service;
  if (service !== null && typeof service !== "string") return false;
  return JSON.stringify(privacyOf(signals, service)) === text;
}

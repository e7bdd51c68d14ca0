import { parseAddress } from "../../address/parse.ts";
import { writeAddress } from "../../data-file/packed-address.ts";
import type { FieldValues } from "../../index/record-fields.ts";
import { keptCountryCode } from "../country-names.ts";
import { parseCsvLine } from "../csv.ts";
import { flattenPackedInClusters } from "../flatten.ts";
import { unpackPart, type PackedPart } from "../join-parts.ts";
import { compareAddresses, LayerBuilder, wordsOf } from "../packed-layer.ts";
import { maxAddress, type Family } from "../ranges.ts";
import { ValueTable, type SourceData } from "../source-data.ts";
import { DELIMITED_LAYOUTS, type DelimitedColumn, type DelimitedFormat, type DelimitedLayout } from "./formats.ts";

/**
 * Bytes read a window at a time: a file is never held whole (a gigabyte that unpacked
 * within CONTRACT §13's bounds costs a megabyte here, and a damaged one stops at its
 * first bad line before the rest is read). A window is used before the next is asked
 * for, so a reader may reuse one buffer.
 */
export interface ByteSource {
  readonly length: number;
  window(from: number, length: number): Uint8Array;
}

export interface ReadDelimitedOptions {
  readonly format: DelimitedFormat;
  /** The file's name as the operator gave it: errors name it, and it may tell the family. */
  readonly file: string;
  /**
   * The family of every row (a source's stated family, `--family`): decimal-integer
   * addresses are read as it, and a row of address text of the other family is refused.
   */
  readonly family?: Family;
  /**
   * Without `family`: the family of decimal-integer addresses only, told by a name other
   * than `file` (a download's file on disk, when `file` is its URL); address text keeps
   * its own. Else `file`'s name tells it (familyFromFileName).
   */
  readonly integerFamily?: Family;
}

/** How many lines between progress reports. */
const PROGRESS_LINES = 65536;
/**
 * The longest line read, in characters. The layouts' lines are at most a few hundred
 * characters; a longer one is damage (or a file of another kind), refused before it is
 * split so that one absurd line cannot cost more than a scan.
 */
export const MAX_LINE_LENGTH = 65536;
const MAX_V6 = maxAddress(6);
/**
 * Bytes are decoded this many at a time (cut after a newline), so a file is never held
 * as one string as well as its bytes: a string of non-ASCII text takes two bytes a
 * character. A chunk is longer than any line allowed (MAX_LINE_LENGTH characters take at
 * most four bytes each).
 */
const CHUNK_BYTES = 1 << 20;

/**
 * Reads a delimited data file (one of DELIMITED_LAYOUTS) into packed ranges per family.
 *
 * Each line is a row `start,end,…` with inclusive bounds written as address text or as
 * decimal integers. Address text tells its family (one file may hold both). A row inside
 * ::ffff:0:0/96 (IPv4-mapped, `::ffff:1.2.3.0,::ffff:1.2.3.255`, however written) is the
 * IPv4 range it carries, since lookups answer IPv4-mapped addresses as IPv4 (CONTRACT
 * §1): kept in IPv6, no lookup would reach it. A row reaching out of that block stays
 * IPv6. Decimal integers take their family from `options.family`, else from the file name
 * (see familyFromFileName); a file name's family applies to them alone, while
 * `options.family` also refuses address text of the other family. Where rows overlap,
 * the later row wins (CONTRACT §7). Blank lines are skipped, and so is one header line:
 * the file's first line, when its first field reads as a column name and it has the
 * layout's number of fields (a one-line page such as "Rate limit exceeded" is no header,
 * and is refused as a malformed row). A row the layout marks as holding no data
 * (iptoasn's "Not routed") adds no range and is not counted in `rows`.
 *
 * Speed and memory: bounds go straight into typed arrays as 32-bit words (no object or
 * BigInt per row), the values after `start,end,` are converted once per distinct text,
 * and a file in address order is flattened cluster by cluster (flattenPackedInClusters).
 *
 * Rows that repeat the range of the row before them (of the same family) replace its
 * value instead of adding a row (the later row wins there anyway): a file of one line
 * repeated costs one row, however long it is. `rows` still counts every row read.
 *
 * The file comes as bytes (UTF-8, decoded a chunk at a time; a ByteSource is read a
 * chunk at a time) or as text. A malformed
 * line, one longer than MAX_LINE_LENGTH, or one that is not UTF-8 throws `file:line: what
 * is wrong`; nothing partial is returned. `progress(done, total)` counts bytes, or
 * characters of a text.
 */
export function readDelimitedPacked(input: string | Uint8Array | ByteSource, options: ReadDelimitedOptions, progress?: (done: number, total: number) => void): PackedPart {
  const { file } = options;
  const layout = DELIMITED_LAYOUTS[options.format];
  if (!layout) throw new Error(`${file}: unknown delimited format ${JSON.stringify(options.format)}`);
  const separator = layout.separator;
  const csv = separator === ",";
  const convert = valueConverter(layout);
  const table = new ValueTable();
  /** The text after `start,end,` → value index, or -1 for a row that adds no range. */
  const known = new Map<string, number>();

  const rows: Record<Family, LayerBuilder> = { 4: new LayerBuilder(1), 6: new LayerBuilder(4) };
  /** Rows read per family (a repeated range is one row in `rows`, each here). */
  const held: Record<Family, number> = { 4: 0, 6: 0 };
  // The bounds of the row being read, as words (IPv4 uses the first).
  const start = new Uint32Array(4);
  const end = new Uint32Array(4);

  let lineNumber = 0;
  const fail = (why: string) => new Error(`${file}:${lineNumber}: ${why}`);

  // Decimal bounds: the family is settled on the first one seen.
  let decimalFamily: Family | undefined = options.family ?? options.integerFamily;
  let decimalFamilySettled = decimalFamily !== undefined;
  /** The family of the bound `bound` last read. */
  let boundFamily: Family = 4;

  /**
   * Reads the bound written in `source` from `from` to `to` into `into`'s words and sets
   * boundFamily. Decimal bounds are read in place: no string is cut for them.
   */
  const bound = (source: string, from: number, to: number, what: "start" | "end", into: Uint32Array): void => {
    const length = to - from;
    let digits = length > 0;
    for (let i = from; i < to; i++) {
      const c = source.charCodeAt(i);
      if (c < 48 || c > 57) {
        digits = false;
        break;
      }
    }
    if (digits) {
      if (length > 1 && source.charCodeAt(from) === 48) throw fail(`the ${what} ${quote(source.slice(from, to))} is a decimal number with a leading zero`);
      if (!decimalFamilySettled) {
        decimalFamily = familyFromFileName(file);
        decimalFamilySettled = true;
      }
      if (decimalFamily === undefined) {
        throw new Error(
          `${file}: the addresses are decimal numbers, which do not say whether they are IPv4 or IPv6; ` +
            `give the family (--family 4 or 6), or put ipv4 or ipv6 in the file name`,
        );
      }
      boundFamily = decimalFamily;
      if (decimalFamily === 4) {
        let value = length > 10 ? Infinity : 0;
        for (let i = from; i < to && value <= 0xffffffff; i++) value = value * 10 + (source.charCodeAt(i) - 48);
        if (value > 0xffffffff) throw fail(`the ${what} ${quote(source.slice(from, to))} is past the last IPv4 address (4294967295)`);
        into[0] = value;
        return;
      }
      // BigInt parses 39 digits faster than arithmetic on words does; it is garbage at once.
      const value = length > 39 ? MAX_V6 + 1n : BigInt(source.slice(from, to));
      if (value > MAX_V6) throw fail(`the ${what} ${quote(source.slice(from, to))} is past the last IPv6 address (2^128-1)`);
      writeAddress(value, 4, into, 0);
      return;
    }
    const field = source.slice(from, to);
    const address = parseAddress(field);
    if (address === null) throw fail(`the ${what} ${quote(field)} is not an IP address or a decimal number`);
    if (address.version === 4) {
      if (field.indexOf(":") >= 0) {
        // parseAddress answers ::ffff:a.b.c.d as the IPv4 address; the file wrote IPv6
        // (the row is folded into IPv4 once both bounds are read).
        boundFamily = 6;
        into[0] = 0;
        into[1] = 0;
        into[2] = 0xffff;
        into[3] = address.value;
        return;
      }
      boundFamily = 4;
      into[0] = address.value;
      return;
    }
    boundFamily = 6;
    into.set(address.words);
  };

  /**
   * Reads the lines of `text`, which starts at a line's start and ends at a newline or
   * the file's end; `reportLines` tells progress every PROGRESS_LINES lines.
   */
  const readLines = (text: string, reportLines: boolean): void => {
    const total = text.length;
    let position = lineNumber === 0 && text.charCodeAt(0) === 0xfeff ? 1 : 0;
    while (position < total) {
      let newline = text.indexOf("\n", position);
      if (newline < 0) newline = total;
      lineNumber++;
      const lineEnd = newline > position && text.charCodeAt(newline - 1) === 13 ? newline - 1 : newline;
      if (lineEnd - position > MAX_LINE_LENGTH) {
        throw fail(`the line is ${(lineEnd - position).toLocaleString("en-US")} characters long; a data line has at most ${MAX_LINE_LENGTH.toLocaleString("en-US")}`);
      }
      if (lineEnd > position) {
        let first = text.indexOf(separator, position);
        if (first >= lineEnd) first = -1;
        let second = first < 0 ? -1 : text.indexOf(separator, first + 1);
        if (second >= lineEnd) second = -1;
        // The bounds, as spans of a string: of the line, or of fields split from it.
        let startSource = text;
        let startFrom = position;
        let startTo = first < 0 ? lineEnd : first;
        let endSource = text;
        let endFrom = first < 0 ? lineEnd : first + 1;
        let endTo = second < 0 ? lineEnd : second;
        let rest: string | undefined; // the fields after `start,end,`, as written
        let restFields: string[] | undefined; // or already split
        let found = 0; // the field count, when there are fewer than three
        if (csv && ((startFrom < startTo && text.charCodeAt(startFrom) === 34) || (endFrom < endTo && text.charCodeAt(endFrom) === 34))) {
          // A quoted start or end (which may hold a comma): split the whole line.
          let fields: string[];
          try {
            fields = parseCsvLine(text.slice(position, lineEnd));
          } catch (error) {
            if (lineNumber > 1 || isRangeBound(text.slice(startFrom, startTo).replaceAll('"', ""))) throw fail((error as Error).message);
            fields = [""]; // a header line with broken quoting
          }
          startSource = fields[0] as string;
          endSource = fields[1] ?? "";
          startFrom = endFrom = 0;
          startTo = startSource.length;
          endTo = endSource.length;
          if (fields.length > 2) restFields = fields.slice(2);
          else found = fields.length;
        } else if (second >= 0) {
          rest = text.slice(second + 1, lineEnd);
        } else {
          found = first < 0 ? 1 : 2;
        }
        if (lineNumber === 1 && isColumnName(startSource.slice(startFrom, startTo)) && fieldsOf(layout, text.slice(position, lineEnd)) === layout.columns.length) {
          position = newline + 1; // a header line
          continue;
        }
        if (found > 0) throw fail(fieldCount(layout, found));

        bound(startSource, startFrom, startTo, "start", start);
        const startFamily: Family = boundFamily;
        bound(endSource, endFrom, endTo, "end", end);
        if (boundFamily !== startFamily) throw fail(`the range starts with an IPv${startFamily} address and ends with an IPv${boundFamily} one`);
        if (options.family !== undefined && startFamily !== options.family) {
          throw fail(`the range is IPv${startFamily}, but the file is read as IPv${options.family}`);
        }
        if (compareAddresses(end, 0, start, 0, wordsOf(startFamily)) < 0) throw fail("the range ends before it starts");
        let family = startFamily;
        if (family === 6 && isIpv4Mapped(start) && isIpv4Mapped(end)) {
          start[0] = start[3] as number;
          end[0] = end[3] as number;
          family = 4;
        }

        let value: number | undefined;
        if (rest !== undefined) {
          value = known.get(rest);
          if (value === undefined) {
            const fields = csv ? splitCsv(rest, fail) : rest.split("\t");
            value = convert(fields, table, fail);
            known.set(ownCopy(rest), value);
          }
        } else {
          value = convert(restFields as string[], table, fail);
        }
        if (value >= 0) {
          held[family]++;
          const builder = rows[family];
          if (builder.lastIs(start, end)) builder.setLastValue(value);
          else builder.push(start, 0, end, 0, value);
        }
      }
      position = newline + 1;
      if (reportLines && progress && lineNumber % PROGRESS_LINES === 0) progress(Math.min(position, total), total);
    }
  };

  if (typeof input === "string") {
    readLines(input, true);
    progress?.(input.length, input.length);
  } else {
    const source: ByteSource = input instanceof Uint8Array ? { length: input.length, window: (from, length) => input.subarray(from, from + length) } : input;
    const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }); // a BOM is skipped by readLines
    let at = 0;
    while (at < source.length) {
      let chunk = source.window(at, Math.min(CHUNK_BYTES, source.length - at));
      if (at + chunk.length < source.length) {
        const newline = chunk.lastIndexOf(10);
        if (newline < 0) throw new Error(`${file}:${lineNumber + 1}: the line is longer than ${CHUNK_BYTES.toLocaleString("en-US")} bytes; a data line has at most ${MAX_LINE_LENGTH.toLocaleString("en-US")} characters`);
        chunk = chunk.subarray(0, newline + 1);
      }
      let text: string;
      try {
        text = decoder.decode(chunk);
      } catch {
        throw new Error(`${file}:${lineNumber + firstLineNotUtf8(chunk)}: not UTF-8 text`);
      }
      readLines(text, false);
      at += chunk.length;
      progress?.(at, source.length);
    }
    if (source.length === 0) progress?.(0, 0);
  }

  return {
    fields: layout.fields,
    values: table.values,
    rows: held,
    4: flattenPackedInClusters(rows[4].layer()),
    6: flattenPackedInClusters(rows[6].layer()),
  };
}

/** Whether the IPv6 address in `words` is in ::ffff:0:0/96. */
function isIpv4Mapped(words: Uint32Array): boolean {
  return words[0] === 0 && words[1] === 0 && words[2] === 0xffff;
}

/** readDelimitedPacked, with the ranges as ValueRange objects: the form tests and small tools read. */
export function readDelimited(input: string | Uint8Array, options: ReadDelimitedOptions, progress?: (done: number, total: number) => void): SourceData {
  return unpackPart(readDelimitedPacked(input, options, progress));
}

/** The line (1-based) of UTF-8 bytes on which they stop being valid UTF-8. */
function firstLineNotUtf8(bytes: Uint8Array): number {
  const decoder = new TextDecoder("utf-8", { fatal: true });
  let line = 1;
  for (let at = 0; at < bytes.length; line++) {
    let newline = bytes.indexOf(10, at);
    if (newline < 0) newline = bytes.length;
    try {
      decoder.decode(bytes.subarray(at, newline));
    } catch {
      return line;
    }
    at = newline + 1;
  }
  return line;
}

/**
 * The family a file's decimal addresses have, by its name (the last path component):
 * "ipv6"/"v6" → 6, "ipv4"/"v4"/"u32" → 4 (not followed by a digit); undefined when the
 * name says neither or both.
 */
export function familyFromFileName(file: string): Family | undefined {
  const name = (file.split(/[\\/]/).pop() ?? "").toLowerCase();
  const six = /v6(?![0-9])/.test(name);
  const four = /v4(?![0-9])|u32(?![0-9])/.test(name);
  if (six === four) return undefined;
  return six ? 6 : 4;
}

/**
 * Whether a first field reads as a column name (`ip_range_start`, `range_start`), which
 * makes its line a header. Anything else that is not a range bound is an error, so a
 * malformed first row is reported, not skipped.
 */
function isColumnName(field: string): boolean {
  return /^[A-Za-z_][A-Za-z_ ]*$/.test(field.trim());
}

/** How many fields a line has in the layout's separator, or -1 when its CSV quoting is broken. */
function fieldsOf(layout: DelimitedLayout, line: string): number {
  if (layout.separator !== ",") return line.split(layout.separator).length;
  try {
    return parseCsvLine(line).length;
  } catch {
    return -1;
  }
}

/** Whether a field reads as a range bound: address text or a decimal integer. */
export function isRangeBound(field: string): boolean {
  return /^[0-9]+$/.test(field) || parseAddress(field) !== null;
}

function splitCsv(text: string, fail: (why: string) => Error): string[] {
  try {
    return parseCsvLine(text);
  } catch (error) {
    throw fail((error as Error).message);
  }
}

function fieldCount(layout: DelimitedLayout, found: number): string {
  const separator = layout.separator === "\t" ? "<TAB>" : ",";
  const names = layout.columns.map((column) => column.name).join(separator);
  return `expected ${layout.columns.length} fields (${names}), found ${found}`;
}

/** A field for an error message: quoted, escaped, and cut if long. */
function quote(field: string): string {
  return JSON.stringify(field.length > 60 ? `${field.slice(0, 60)}…` : field);
}

type Converter = (fields: readonly string[], table: ValueTable, fail: (why: string) => Error) => number;

/**
 * For a layout: turns the fields after `start,end` into a value index in `table`, or -1
 * for a row that holds no data (the layout's skipWhen).
 */
function valueConverter(layout: DelimitedLayout): Converter {
  const columns = layout.columns.slice(2);
  const skip = layout.skipWhen === undefined ? undefined : Object.entries(layout.skipWhen);
  return (fields, table, fail) => {
    if (fields.length !== columns.length) throw fail(fieldCount(layout, fields.length + 2));
    const values: FieldValues = {};
    for (let i = 0; i < columns.length; i++) {
      const column = columns[i] as DelimitedColumn;
      if (column.field === undefined) continue;
      values[column.field] = fieldValue(column, fields[i] as string, fail);
    }
    if (skip !== undefined && skip.every(([field, value]) => values[field as keyof FieldValues] === value)) return -1;
    return table.intern(values);
  };
}

const ASN = /^[0-9]{1,10}$/;
const LETTERS2 = /^[A-Za-z]{2}$/;
const DECIMAL = /^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/;

function fieldValue(column: DelimitedColumn, text: string, fail: (why: string) => Error): string | number | null {
  if (text === "" || column.noValue?.includes(text)) return null;
  switch (column.kind) {
    case "asn": {
      const value = ASN.test(text) ? Number(text) : -1;
      if (value < 0 || value > 0xffffffff) throw fail(`the AS number ${quote(text)} is not an integer from 0 to 4294967295`);
      return value;
    }
    case "country":
      if (!LETTERS2.test(text)) throw fail(`the country code ${quote(text)} is not two letters`);
      return keptCountryCode(text);
    case "latitude":
    case "longitude": {
      const limit = column.kind === "latitude" ? 90 : 180;
      const value = DECIMAL.test(text) ? Number(text) : NaN;
      if (!(value >= -limit && value <= limit)) throw fail(`the ${column.kind} ${quote(text)} is not a number from -${limit} to ${limit}`);
      return value === 0 ? 0 : value;
    }
    default:
      return ownCopy(text);
  }
}

/**
 * A string that holds its own characters. A slice of a string shares the characters of
 * the string it was cut from and keeps all of it alive: a value kept from a line would
 * keep its whole chunk of the file in memory.
 */
function ownCopy(text: string): string {
  return JSON.parse(JSON.stringify(text)) as string;
}

import { parseAddress } from "../../address/parse.ts";
import type { FieldValues } from "../../index/record-fields.ts";
import { parseCsvLine } from "../csv.ts";
import { flattenRows } from "../flatten.ts";
import { maxAddress, type Family, type ValueRange } from "../ranges.ts";
import { ValueTable, type SourceData, type SourceLayer } from "../source-data.ts";
import { DELIMITED_LAYOUTS, type DelimitedColumn, type DelimitedFormat, type DelimitedLayout } from "./formats.ts";

export interface ReadDelimitedOptions {
  readonly format: DelimitedFormat;
  /** The file's name as the operator gave it: errors name it, and it may tell the family. */
  readonly file: string;
  /** The family of decimal-integer addresses; else taken from the file name. */
  readonly family?: Family;
}

/** How many lines between progress reports. */
const PROGRESS_LINES = 65536;
const MAX_V6 = maxAddress(6);
const IPV4_MAPPED = 0xffffn << 32n;

/**
 * Reads a delimited data file (one of DELIMITED_LAYOUTS) into ranges per family.
 *
 * Each line is a row `start,end,…` with inclusive bounds written as address text or as
 * decimal integers. Address text tells its family (one file may hold both); an
 * IPv4-mapped IPv6 text (`::ffff:1.2.3.4`) stays in IPv6 space, as the file wrote it.
 * Decimal integers take their family from `options.family`, else from the file name
 * (see familyFromFileName). Where rows overlap, the later row wins (CONTRACT §7). Blank
 * lines are skipped, and so is one header line at the top (a first line whose first
 * field is neither an address nor a number). A row the layout marks as holding no data
 * (iptoasn's "Not routed") adds no range and is not counted in `rows`.
 *
 * Speed: the values after `start,end,` are converted once per distinct text, and a file
 * in address order is flattened cluster by cluster (flattenInClusters).
 *
 * A malformed line throws `file:line: what is wrong`; nothing partial is returned.
 * `progress(done, total)` counts characters of `text`.
 */
export function readDelimited(text: string, options: ReadDelimitedOptions, progress?: (done: number, total: number) => void): SourceData {
  const { file } = options;
  const layout = DELIMITED_LAYOUTS[options.format];
  if (!layout) throw new Error(`${file}: unknown delimited format ${JSON.stringify(options.format)}`);
  const separator = layout.separator;
  const csv = separator === ",";
  const convert = valueConverter(layout);
  const table = new ValueTable();
  /** The text after `start,end,` → value index, or -1 for a row that adds no range. */
  const known = new Map<string, number>();

  const rows: Record<Family, ValueRange<number>[]> = { 4: [], 6: [] };

  let lineNumber = 0;
  const fail = (why: string) => new Error(`${file}:${lineNumber}: ${why}`);

  // Decimal bounds: the family is settled on the first one seen.
  let decimalFamily: Family | undefined = options.family;
  let decimalFamilySettled = options.family !== undefined;
  /** The family of the bound `bound` last read. */
  let boundFamily: Family = 4;

  const bound = (field: string, what: "start" | "end"): bigint => {
    const length = field.length;
    let digits = length > 0;
    for (let i = 0; i < length; i++) {
      const c = field.charCodeAt(i);
      if (c < 48 || c > 57) {
        digits = false;
        break;
      }
    }
    if (digits) {
      if (length > 1 && field.charCodeAt(0) === 48) throw fail(`the ${what} ${quote(field)} is a decimal number with a leading zero`);
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
        const value = length > 10 ? Infinity : Number(field);
        if (value > 0xffffffff) throw fail(`the ${what} ${quote(field)} is past the last IPv4 address (4294967295)`);
        return BigInt(value);
      }
      const value = length > 39 ? MAX_V6 + 1n : BigInt(field);
      if (value > MAX_V6) throw fail(`the ${what} ${quote(field)} is past the last IPv6 address (2^128-1)`);
      return value;
    }
    const address = parseAddress(field);
    if (address === null) throw fail(`the ${what} ${quote(field)} is not an IP address or a decimal number`);
    if (address.version === 4) {
      if (field.indexOf(":") >= 0) {
        // parseAddress answers ::ffff:a.b.c.d as the IPv4 address; the file wrote IPv6.
        boundFamily = 6;
        return IPV4_MAPPED | BigInt(address.value);
      }
      boundFamily = 4;
      return BigInt(address.value);
    }
    boundFamily = 6;
    const words = address.words;
    return (BigInt(words[0]) << 96n) | (BigInt(words[1]) << 64n) | (BigInt(words[2]) << 32n) | BigInt(words[3]);
  };

  const total = text.length;
  let position = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  let seenLine = false;
  while (position < total) {
    let newline = text.indexOf("\n", position);
    if (newline < 0) newline = total;
    lineNumber++;
    const lineEnd = newline > position && text.charCodeAt(newline - 1) === 13 ? newline - 1 : newline;
    if (lineEnd > position) {
      let first = text.indexOf(separator, position);
      if (first >= lineEnd) first = -1;
      let second = first < 0 ? -1 : text.indexOf(separator, first + 1);
      if (second >= lineEnd) second = -1;
      let startText = text.slice(position, first < 0 ? lineEnd : first);
      let endText = second < 0 ? (first < 0 ? "" : text.slice(first + 1, lineEnd)) : text.slice(first + 1, second);
      let rest: string | undefined; // the fields after `start,end,`, as written
      let restFields: string[] | undefined; // or already split
      let found = 0; // the field count, when there are fewer than three
      if (csv && (startText.charCodeAt(0) === 34 || endText.charCodeAt(0) === 34)) {
        // A quoted start or end (which may hold a comma): split the whole line.
        let fields: string[];
        try {
          fields = parseCsvLine(text.slice(position, lineEnd));
        } catch (error) {
          if (seenLine || isRangeBound(startText.replaceAll('"', ""))) throw fail((error as Error).message);
          fields = [""]; // a header line with broken quoting
        }
        startText = fields[0] as string;
        endText = fields[1] ?? "";
        if (fields.length > 2) restFields = fields.slice(2);
        else found = fields.length;
      } else if (second >= 0) {
        rest = text.slice(second + 1, lineEnd);
      } else {
        found = first < 0 ? 1 : 2;
      }
      if (!seenLine) {
        seenLine = true;
        if (isColumnName(startText)) {
          position = newline + 1; // a header line
          continue;
        }
      }
      if (found > 0) throw fail(fieldCount(layout, found));

      const start = bound(startText, "start");
      const startFamily: Family = boundFamily;
      const end = bound(endText, "end");
      if (boundFamily !== startFamily) throw fail(`the range starts with an IPv${startFamily} address and ends with an IPv${boundFamily} one`);
      if (options.family !== undefined && startFamily !== options.family) {
        throw fail(`the range is IPv${startFamily}, but the file is read as IPv${options.family}`);
      }
      if (end < start) throw fail("the range ends before it starts");

      let value: number | undefined;
      if (rest !== undefined) {
        value = known.get(rest);
        if (value === undefined) {
          const fields = csv ? splitCsv(rest, fail) : rest.split("\t");
          value = convert(fields, table, fail);
          known.set(rest, value);
        }
      } else {
        value = convert(restFields as string[], table, fail);
      }
      if (value >= 0) rows[startFamily].push({ start, end, value });
    }
    position = newline + 1;
    if (progress && lineNumber % PROGRESS_LINES === 0) progress(Math.min(position, total), total);
  }
  progress?.(total, total);

  const layer = (family: Family): SourceLayer => ({ rows: rows[family].length, ranges: flattenInClusters(rows[family]) });
  return { fields: layout.fields, values: table.values, v4: layer(4), v6: layer(6) };
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
 * flattenRows (the later row wins), done cluster by cluster for a file in address order.
 *
 * The data files list their rows by start, with few overlaps. A cluster is a run of
 * rows that each start no earlier than its first row and no later than the furthest end
 * so far; the next row starts past that end, so clusters cover disjoint, increasing
 * spans and flattening each alone gives what flattening all would. A row alone is its
 * own range; only clusters of several rows go through flattenRows. A file out of order
 * (a row starting before its cluster) is flattened whole.
 */
export function flattenInClusters<V>(rows: readonly ValueRange<V>[]): ValueRange<V>[] {
  const result: ValueRange<V>[] = [];
  let i = 0;
  while (i < rows.length) {
    const first = rows[i] as ValueRange<V>;
    let end = first.end;
    let j = i + 1;
    for (; j < rows.length; j++) {
      const row = rows[j] as ValueRange<V>;
      if (row.start > end) break;
      if (row.start < first.start) return flattenRows(rows);
      if (row.end > end) end = row.end;
    }
    if (j === i + 1) result.push(first);
    else for (const range of flattenRows(rows.slice(i, j))) result.push(range);
    i = j;
  }
  return result;
}

/**
 * Whether a first field reads as a column name (`ip_range_start`, `range_start`), which
 * makes its line a header. Anything else that is not a range bound is an error, so a
 * malformed first row is reported, not skipped.
 */
function isColumnName(field: string): boolean {
  return /^[A-Za-z_][A-Za-z_ ]*$/.test(field.trim());
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
      return text.toUpperCase();
    case "latitude":
    case "longitude": {
      const limit = column.kind === "latitude" ? 90 : 180;
      const value = DECIMAL.test(text) ? Number(text) : NaN;
      if (!(value >= -limit && value <= limit)) throw fail(`the ${column.kind} ${quote(text)} is not a number from -${limit} to ${limit}`);
      return value === 0 ? 0 : value;
    }
    default:
      return text;
  }
}

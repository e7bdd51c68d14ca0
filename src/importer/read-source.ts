import { csvLines, parseCsvLine } from "./csv.ts";
import { maxAddress, type Family, type ValueRange } from "./ranges.ts";
import type { LayerKind } from "./source.ts";

const DECIMAL = /^(0|[1-9][0-9]{0,38})$/;

/**
 * Reads one numeric CSV file into rows, in file order. The value of an `asn` row is
 * `ASN<TAB>organisation` and of a `country` row the upper-case code: strings, so equal
 * values compare equal with ===. A malformed line stops the import with its line number.
 */
export function readRows(text: string, family: Family, kind: LayerKind, file: string): ValueRange<string>[] {
  const max = maxAddress(family);
  const rows: ValueRange<string>[] = [];
  for (const [line, number] of csvLines(text)) {
    const fail = (why: string) => new Error(`${file}:${number}: ${why}`);
    let fields: string[];
    try {
      fields = parseCsvLine(line);
    } catch (error) {
      throw fail((error as Error).message);
    }
    const [startText = "", endText = "", first = "", second = ""] = fields;
    if (!DECIMAL.test(startText) || !DECIMAL.test(endText)) throw fail("the range is not two decimal numbers");
    const start = BigInt(startText);
    const end = BigInt(endText);
    if (end > max) throw fail(`the range ends past the last IPv${family} address`);
    if (end < start) throw fail("the range ends before it starts");
    if (kind === "asn") {
      if (fields.length !== 4 || !/^[0-9]{1,10}$/.test(first) || Number(first) > 0xffffffff) throw fail("expected start,end,asn,organisation");
      rows.push({ start, end, value: `${Number(first)}\t${second}` });
    } else {
      if (fields.length !== 3 || !/^[A-Za-z]{2}$/.test(first)) throw fail("expected start,end,country_code");
      rows.push({ start, end, value: first.toUpperCase() });
    }
  }
  return rows;
}

import { afterEach, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { FieldValues } from "../../../src/index/record-fields.ts";
import type { DelimitedFormat } from "../../../src/importer/delimited/formats.ts";
import { readDelimited } from "../../../src/importer/delimited/read-delimited.ts";
import { flattenPackedInClusters, flattenRows } from "../../../src/importer/flatten.ts";
import { packLayer, unpackLayer } from "../../../src/importer/packed-layer.ts";
import type { ValueRange } from "../../../src/importer/ranges.ts";
import type { SourceData, SourceLayer } from "../../../src/importer/source-data.ts";

// The ip-location-db packages pinned in package.json: each data set comes as address
// text (asn-ipv4.csv) and as decimal integers (asn-ipv4-num.csv); both must read alike.
const PACKAGES = join(import.meta.dir, "../../../node_modules/@ip-location-db");

const PAIRS: ReadonlyArray<{
  format: DelimitedFormat;
  family: 4 | 6;
  text: string;
  numeric: string;
  rows: number;
  /** The first line of both files, as a range. */
  first: [bigint, bigint, FieldValues];
}> = [
  {
    format: "asn-csv",
    family: 4,
    text: "asn/asn-ipv4.csv",
    numeric: "asn/asn-ipv4-num.csv",
    rows: 411961,
    first: [16777216n, 16777471n, { asn: 13335, as_name: "Cloudflare, Inc." }],
  },
  {
    format: "asn-csv",
    family: 6,
    text: "asn/asn-ipv6.csv",
    numeric: "asn/asn-ipv6-num.csv",
    rows: 103197,
    first: [42540488161975842760550356425300246528n, 42540488241204005274814694018844196863n, { asn: 6939, as_name: "Hurricane Electric LLC" }],
  },
  {
    format: "country-csv",
    family: 4,
    text: "geo-whois-asn-country/geo-whois-asn-country-ipv4.csv",
    numeric: "geo-whois-asn-country/geo-whois-asn-country-ipv4-num.csv",
    rows: 334373,
    first: [16777216n, 16777471n, { country_code: "AU" }],
  },
  {
    format: "country-csv",
    family: 6,
    text: "geo-whois-asn-country/geo-whois-asn-country-ipv6.csv",
    numeric: "geo-whois-asn-country/geo-whois-asn-country-ipv6-num.csv",
    rows: 216295,
    first: [42540488320432167789079031612388147200n, 42540488320433376714898646241562853375n, { country_code: "JP" }],
  },
];

// Each test reads a pair of files into hundreds of thousands of ranges with BigInts. Late
// in a whole run the collector let them pile up (the file took 1 GB there, 0.6 GB alone):
// what earlier files left goes first, and each test's ranges when it ends.
beforeAll(() => Bun.gc(true));
afterEach(() => Bun.gc(true));

async function timedRead(path: string, format: DelimitedFormat): Promise<SourceData> {
  const text = await Bun.file(join(PACKAGES, path)).text();
  const began = performance.now();
  const data = readDelimited(text, { format, file: path });
  console.log(`read ${path}: ${(performance.now() - began).toFixed(0)} ms`);
  return data;
}

/** The index of the first range where two layers differ (bounds or values), or -1. */
function firstDifference(a: SourceData, layerA: SourceLayer, b: SourceData, layerB: SourceLayer): number {
  const length = Math.max(layerA.ranges.length, layerB.ranges.length);
  for (let i = 0; i < length; i++) {
    const x = layerA.ranges[i];
    const y = layerB.ranges[i];
    if (x === undefined || y === undefined || x.start !== y.start || x.end !== y.end) return i;
    if (JSON.stringify(a.values[x.value]) !== JSON.stringify(b.values[y.value])) return i;
  }
  return -1;
}

describe.each(PAIRS)("$text and its -num twin", ({ format, family, text, numeric, rows, first }) => {
  test("identical ranges and values", async () => {
    const fromText = await timedRead(text, format);
    const fromNumbers = await timedRead(numeric, format);
    const [layerT, layerN, other] = family === 4 ? [fromText.v4, fromNumbers.v4, fromText.v6] : [fromText.v6, fromNumbers.v6, fromText.v4];
    expect(other).toEqual({ rows: 0, ranges: [] });
    expect(layerT.rows).toBe(rows);
    expect(layerN.rows).toBe(rows);
    expect(layerT.ranges.length).toBe(layerN.ranges.length);
    expect(firstDifference(fromText, layerT, fromNumbers, layerN)).toBe(-1);
    expect(fromText.fields).toEqual(fromNumbers.fields);

    // Disjoint and sorted, every value used, the same as flattening the rows afresh.
    for (let i = 1; i < layerT.ranges.length; i++) {
      if (!(layerT.ranges[i - 1]!.end < layerT.ranges[i]!.start)) throw new Error(`ranges ${i - 1} and ${i} overlap or are out of order`);
    }
    const again = flattenRows(layerT.ranges);
    expect(again.length).toBe(layerT.ranges.length);
    expect(again.every((range, i) => range.start === layerT.ranges[i]!.start && range.end === layerT.ranges[i]!.end && range.value === layerT.ranges[i]!.value)).toBe(true);
    expect(layerT.ranges.every((range) => fromText.values[range.value] !== undefined)).toBe(true);
    const head = layerT.ranges[0]!;
    expect([head.start, head.end, fromText.values[head.value]]).toEqual(first);
  });
});

test("asn-ipv4-num.csv has overlapping rows; flattening them by clusters gives what flattenRows gives", async () => {
  const text = await Bun.file(join(PACKAGES, "asn/asn-ipv4-num.csv")).text();
  const rows: ValueRange<number>[] = [];
  const ids = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const [start, end] = line.split(",", 2) as [string, string];
    const value = line.slice(start.length + end.length + 2);
    if (!ids.has(value)) ids.set(value, ids.size);
    rows.push({ start: BigInt(start), end: BigInt(end), value: ids.get(value)! });
  }
  expect(rows.some((row, i) => i > 0 && row.start <= rows[i - 1]!.end)).toBe(true);
  const clustered = unpackLayer(flattenPackedInClusters(packLayer(4, rows)));
  const whole = flattenRows(rows);
  expect(clustered.length).toBe(whole.length);
  expect(clustered.every((range, i) => range.start === whole[i]!.start && range.end === whole[i]!.end && range.value === whole[i]!.value)).toBe(true);
});

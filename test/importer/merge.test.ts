import { expect, test } from "bun:test";
import { mergeLayers, type LayerValues } from "../../src/importer/merge.ts";
import type { ValueRange } from "../../src/importer/ranges.ts";

// Layers carry value indexes; the tests name values and number them here.
const names: string[] = [];
const valueIndex = (name: string) => (names.includes(name) ? names.indexOf(name) : names.push(name) - 1);
const r = (start: number, end: number, value: string): ValueRange<number> => ({ start: BigInt(start), end: BigInt(end), value: valueIndex(value) });

function ids() {
  const seen = new Map<string, number>();
  return (values: LayerValues) => {
    if (values.every((v) => v < 0)) return 0;
    const key = [...values].map((v) => (v < 0 ? "-" : names[v])).join("/");
    if (!seen.has(key)) seen.set(key, seen.size + 1);
    return seen.get(key)!;
  };
}

test("layers merge into a partition of the space with maximal runs", () => {
  const asn = [r(0x01000000, 0x010000ff, "13335"), r(0x01000100, 0x010001ff, "13335"), r(0x01000300, 0x010003ff, "7")];
  const country = [r(0x01000000, 0x010001ff, "AU"), r(0x01000200, 0x010002ff, "CN")];
  const table = mergeLayers(4, [asn, country], ids());
  expect(table.starts.map(Number)).toEqual([0, 0x01000000, 0x01000200, 0x01000300, 0x01000400]);
  // 13335/AU spans two ASN rows but is one segment; gaps are record 0.
  expect(table.records).toEqual([0, 1, 2, 3, 0]);
});

test("neighbours with the same values are one segment, also across layers' boundaries", () => {
  const table = mergeLayers(4, [[r(10, 19, "a"), r(20, 29, "a")], [r(10, 14, "X"), r(15, 29, "X")]], ids());
  expect(table.starts.map(Number)).toEqual([0, 10, 30]);
  expect(table.records).toEqual([0, 1, 0]);
});

test("a layer covering the whole space leaves no gap, IPv6 too", () => {
  const max = (1n << 128n) - 1n;
  const table = mergeLayers(6, [[{ start: 0n, end: max, value: valueIndex("all") }], []], ids());
  expect(table.starts).toEqual([0n]);
  expect(table.records).toEqual([1]);
});

import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { flattenPacked, flattenPackedInClusters, flattenRows } from "../../src/importer/flatten.ts";
import { packLayer, unpackLayer } from "../../src/importer/packed-layer.ts";
import { maxAddress, type Family, type ValueRange } from "../../src/importer/ranges.ts";

const r = (start: number, end: number, value: string): ValueRange<string> => ({ start: BigInt(start), end: BigInt(end), value });
const plain = (ranges: ValueRange<string>[]) => ranges.map((x) => [Number(x.start), Number(x.end), x.value]);

/** The rule itself, address by address: the last row covering it. */
function reference(rows: ValueRange<string>[], upTo: number) {
  const out: Array<[number, string]> = [];
  for (let a = 0; a <= upTo; a++) {
    const winner = rows.findLast((row) => row.start <= BigInt(a) && BigInt(a) <= row.end);
    if (winner) out.push([a, winner.value]);
  }
  return out;
}

function expand(ranges: ValueRange<string>[]) {
  return ranges.flatMap((x) => Array.from({ length: Number(x.end - x.start) + 1 }, (_, i) => [Number(x.start) + i, x.value] as [number, string]));
}

describe("flattenRows: the later row wins", () => {
  test("disjoint rows stay as they are", () => {
    expect(plain(flattenRows([r(0, 9, "a"), r(10, 19, "b"), r(30, 39, "c")]))).toEqual([[0, 9, "a"], [10, 19, "b"], [30, 39, "c"]]);
  });

  test("a nested block splits the block around it", () => {
    expect(plain(flattenRows([r(0, 99, "big"), r(10, 19, "small")]))).toEqual([[0, 9, "big"], [10, 19, "small"], [20, 99, "big"]]);
  });

  test("an earlier nested row is hidden by a later covering one", () => {
    expect(plain(flattenRows([r(10, 19, "small"), r(0, 99, "big")]))).toEqual([[0, 99, "big"]]);
  });

  test("a partial overlap: the later row takes the shared part", () => {
    expect(plain(flattenRows([r(0, 20, "a"), r(10, 30, "b")]))).toEqual([[0, 9, "a"], [10, 30, "b"]]);
    expect(plain(flattenRows([r(10, 30, "b"), r(0, 20, "a")]))).toEqual([[0, 20, "a"], [21, 30, "b"]]);
  });

  test("identical rows: the last one", () => {
    expect(plain(flattenRows([r(5, 5, "a"), r(5, 5, "b")]))).toEqual([[5, 5, "b"]]);
  });

  test("the edges of the space", () => {
    const max = (1n << 128n) - 1n;
    const out = flattenRows([{ start: 0n, end: max, value: "all" }, { start: max, end: max, value: "last" }, { start: 0n, end: 0n, value: "first" }]);
    expect(out.map((x) => [x.start, x.end, x.value])).toEqual([[0n, 0n, "first"], [1n, max - 1n, "all"], [max, max, "last"]]);
  });

  test("a range that ends before it starts is an error", () => {
    expect(() => flattenRows([r(5, 4, "x")])).toThrow(/ends before it starts/);
  });

  test("random rows in any order agree with the rule applied address by address", () => {
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    for (let round = 0; round < 200; round++) {
      const rows = Array.from({ length: 1 + random(12) }, (_, i) => {
        const start = random(60);
        return r(start, start + random(15), `v${i % 4}`);
      });
      const flat = flattenRows(rows);
      for (let i = 1; i < flat.length; i++) expect(flat[i]!.start).toBeGreaterThan(flat[i - 1]!.end);
      expect(expand(flat)).toEqual(reference(rows, 80));
    }
  });
});

/** Rows with string values as a packed layer (values: indexes into `names`) and back. */
function packed(family: Family, rows: readonly ValueRange<string>[]) {
  const names = [...new Set(rows.map((row) => row.value))];
  const layer = packLayer(
    family,
    rows.map((row) => ({ start: row.start, end: row.end, value: names.indexOf(row.value) })),
  );
  return { layer, back: (flat: ReturnType<typeof flattenPacked>) => unpackLayer(flat).map((range) => ({ ...range, value: names[range.value] as string })) };
}

describe("flattenPacked and flattenPackedInClusters: flattenRows over packed rows", () => {
  const max6 = maxAddress(6);
  const cases: Array<[Family, ValueRange<string>[]]> = [
    [4, []],
    [4, [r(0, 9, "a")]],
    [4, [r(0, 9, "a"), r(10, 19, "b"), r(30, 39, "c")]],
    [4, [r(0, 99, "a"), r(10, 19, "b"), r(100, 109, "c")]],
    [4, [r(0, 99, "a"), r(10, 19, "b"), r(99, 109, "c"), r(200, 200, "d"), r(200, 200, "e")]],
    [4, [r(10, 99, "a"), r(50, 60, "b"), r(5, 20, "c"), r(200, 300, "d")]],
    [4, [r(100, 199, "a"), r(0, 9, "b"), r(5, 150, "c")]],
    [4, [r(0, 9, "a"), r(20, 29, "b"), r(5, 25, "c")]], // c reaches back into an earlier cluster
    [4, [r(0, 9, "a"), r(0, 9, "b"), r(0, 4, "a")]],
    [4, [r(0, 0xffffffff, "all"), r(0xffffffff, 0xffffffff, "last"), r(0, 0, "first")]],
    [4, [r(0xfffffff0, 0xffffffff, "a"), r(0xfffffff8, 0xffffffff, "b")]], // rows that never close
    [6, [{ start: 0n, end: max6, value: "all" }, { start: max6, end: max6, value: "last" }, { start: 0n, end: 0n, value: "first" }]],
    [6, [{ start: (1n << 64n) - 5n, end: (1n << 96n) + 5n, value: "a" }, { start: (1n << 64n) - 1n, end: 1n << 64n, value: "b" }]], // borrows and carries across words
  ];
  test.each(cases)("IPv%p %#", (family, rows) => {
    const { layer, back } = packed(family, rows);
    const expected = flattenRows(rows);
    expect(back(flattenPacked(layer))).toEqual(expected);
    expect(back(flattenPackedInClusters(layer))).toEqual(expected);
  });

  test("random rows, in order or not, in IPv4 and in IPv6 across word boundaries", () => {
    const row = fc.tuple(fc.nat(80), fc.nat(20), fc.constantFrom("a", "b", "c"));
    fc.assert(
      fc.property(fc.array(row, { maxLength: 25 }), fc.boolean(), fc.constantFrom(4 as const, 6 as const), (spec, sorted, family) => {
        const base = family === 4 ? 0n : (1n << 96n) - 40n;
        const rows = spec.map(([start, length, value]) => ({ start: base + BigInt(start), end: base + BigInt(start + length), value }));
        if (sorted) rows.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
        const { layer, back } = packed(family, rows);
        const expected = flattenRows(rows);
        expect(back(flattenPacked(layer))).toEqual(expected);
        expect(back(flattenPackedInClusters(layer))).toEqual(expected);
      }),
      { numRuns: 500 },
    );
  });

  test("a range that ends before it starts is an error", () => {
    expect(() => flattenPacked(packed(4, [r(5, 4, "x")]).layer)).toThrow(/ends before it starts/);
    expect(() => flattenPackedInClusters(packed(4, [r(5, 4, "x")]).layer)).toThrow(/ends before it starts/);
  });
});

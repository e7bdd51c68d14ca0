import { describe, expect, test } from "bun:test";
import { flattenRows } from "../../src/importer/flatten.ts";
import type { ValueRange } from "../../src/importer/ranges.ts";

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

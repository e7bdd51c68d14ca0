import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { parseAddress } from "../../src/address/parse.ts";
import { lastStartAtOrBelow128, lastStartAtOrBelow32, runPrefix128, runPrefix32, segmentPrefix128, segmentPrefix32 } from "../../src/address/sorted-search.ts";

/**
 * The block around an address that stays in its segment, against its definition: the
 * shortest prefix whose block around the address lies wholly between the segment's start
 * and the next start, found by trying every prefix from 0 on (BigInt, any width).
 */
function oraclePrefix(value: bigint, start: bigint, next: bigint | null, bits: number): number {
  const all = (1n << BigInt(bits)) - 1n;
  for (let prefix = 0; prefix <= bits; prefix++) {
    const host = (1n << BigInt(bits - prefix)) - 1n;
    const first = value & (all ^ host);
    const last = first | host;
    if (first >= start && (next === null || last < next)) return prefix;
  }
  throw new Error("unreachable: the /bits block of the address is always inside its segment");
}

const v4 = (text: string) => (parseAddress(text) as { value: number }).value;
const v6 = (text: string) => (parseAddress(text) as { words: readonly number[] }).words;
const bigOfWords = (words: ArrayLike<number>) => Array.from(words).reduce((value, word) => (value << 32n) | BigInt(word), 0n);

describe("segmentPrefix32", () => {
  const starts = Uint32Array.from([0, v4("10.0.0.0"), v4("10.0.1.0"), v4("10.0.2.0"), v4("10.0.4.0"), v4("192.0.2.128")]);
  test.each([
    ["the whole space in one segment", Uint32Array.from([0]), "203.0.113.9", 0],
    ["the first segment, below 10.0.0.0: 8.0.0.0/7 reaches its end", starts, "9.255.255.255", 7],
    ["a segment that is one /24", starts, "10.0.0.77", 24],
    ["a segment that is one /23", starts, "10.0.3.1", 23],
    ["a segment of no one block: 10.0.4.0/22 at its start", starts, "10.0.4.1", 22],
    ["the last segment, from 192.0.2.128 to the end: 224.0.0.0/3", starts, "255.255.255.255", 3],
    ["the last segment just above its start", starts, "192.0.2.129", 25],
  ] as const)("%s", (_, table, address, expected) => {
    const value = v4(address);
    expect(segmentPrefix32(table, lastStartAtOrBelow32(table, value), value)).toBe(expected);
  });

  test("is the shortest prefix whose block stays in the segment, for any starts and address", () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: 0xffffffff }), { maxLength: 12 }), fc.integer({ min: 0, max: 0xffffffff }), (rest, value) => {
        const table = Uint32Array.from([0, ...rest].sort((a, b) => a - b));
        const i = lastStartAtOrBelow32(table, value);
        const next = i + 1 < table.length ? BigInt(table[i + 1] as number) : null;
        expect(segmentPrefix32(table, i, value)).toBe(oraclePrefix(BigInt(value), BigInt(table[i] as number), next, 32));
      }),
    );
  });
});

describe("segmentPrefix128", () => {
  const words = (text: string) => Array.from(v6(text));
  const starts = Uint32Array.from([...words("::"), ...words("2001:db8::"), ...words("2001:db8:0:1::"), ...words("2001:db9::")]);
  test.each([
    ["the first segment, below 2001:db8::", "2001:db7:ffff::1", 29],
    ["an aligned /64 segment", "2001:db8::42", 64],
    ["a segment from 2001:db8:0:1:: to 2001:db9::, its address in the /64 at its start", "2001:db8:0:1::5", 64],
    ["the same segment further in", "2001:db8:8000::1", 33],
    ["the last segment, to the end of the space", "ffff::1", 1],
  ] as const)("%s", (_, address, expected) => {
    const value = v6(address);
    expect(segmentPrefix128(starts, lastStartAtOrBelow128(starts, value), value)).toBe(expected);
  });

  test("is the shortest prefix whose block stays in the segment, for any starts and address", () => {
    const word = fc.integer({ min: 0, max: 0xffffffff });
    const address = fc.tuple(word, word, word, word);
    fc.assert(
      fc.property(fc.uniqueArray(address, { maxLength: 8, selector: (a) => a.join(":") }), address, (rest, value) => {
        const sorted = rest.filter((a) => a.some((w) => w !== 0)).sort((a, b) => (bigOfWords(a) < bigOfWords(b) ? -1 : 1));
        const table = Uint32Array.from([0, 0, 0, 0, ...sorted.flat()]);
        const i = lastStartAtOrBelow128(table, value);
        const next = i * 4 + 4 < table.length ? bigOfWords(table.subarray(i * 4 + 4, i * 4 + 8)) : null;
        expect(segmentPrefix128(table, i, value)).toBe(oraclePrefix(bigOfWords(value), bigOfWords(table.subarray(i * 4, i * 4 + 4)), next, 128));
      }),
    );
  });
});

describe("runPrefix32 and runPrefix128", () => {
  test("is the shortest prefix whose block stays in the run of segments from `first` to `last`, for any starts, run and address in it", () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: 0xffffffff }), { maxLength: 12 }), fc.integer({ min: 0, max: 0xffffffff }), fc.nat(), fc.nat(), (rest, value, below, above) => {
        const table = Uint32Array.from([0, ...rest].sort((a, b) => a - b));
        const i = lastStartAtOrBelow32(table, value);
        const first = i - (below % (i + 1));
        const last = i + (above % (table.length - i));
        const next = last + 1 < table.length ? BigInt(table[last + 1] as number) : null;
        expect(runPrefix32(table, first, last, value)).toBe(oraclePrefix(BigInt(value), BigInt(table[first] as number), next, 32));
        // A run of one segment is the segment.
        expect(runPrefix32(table, i, i, value)).toBe(segmentPrefix32(table, i, value));
      }),
    );
    const word = fc.integer({ min: 0, max: 0xffffffff });
    const address = fc.tuple(word, word, word, word);
    fc.assert(
      fc.property(fc.uniqueArray(address, { maxLength: 8, selector: (a) => a.join(":") }), address, fc.nat(), fc.nat(), (rest, value, below, above) => {
        const sorted = rest.filter((a) => a.some((w) => w !== 0)).sort((a, b) => (bigOfWords(a) < bigOfWords(b) ? -1 : 1));
        const table = Uint32Array.from([0, 0, 0, 0, ...sorted.flat()]);
        const count = table.length / 4;
        const i = lastStartAtOrBelow128(table, value);
        const first = i - (below % (i + 1));
        const last = i + (above % (count - i));
        const next = last + 1 < count ? bigOfWords(table.subarray(last * 4 + 4, last * 4 + 8)) : null;
        expect(runPrefix128(table, first, last, value)).toBe(oraclePrefix(bigOfWords(value), bigOfWords(table.subarray(first * 4, first * 4 + 4)), next, 128));
        expect(runPrefix128(table, i, i, value)).toBe(segmentPrefix128(table, i, value));
      }),
    );
  });
});

import { describe, expect, test } from "bun:test";
import { followsDirectly, packLayer, unpackLayer } from "../../src/importer/packed-layer.ts";

const words4 = (value: bigint) => {
  const layer = packLayer(6, [{ start: value, end: value, value: 0 }]);
  return layer.starts;
};

describe("followsDirectly", () => {
  test.each([
    [0n, 1n, true],
    [0n, 2n, false],
    [1n, 0n, false],
    [0xffffffffn, 0x1_0000_0000n, true], // a carry into the next word
    [0xffffffffn, 0x1_0000_0001n, false],
    [(1n << 96n) - 1n, 1n << 96n, true], // carries through three words
    [(1n << 96n) - 1n, (1n << 96n) + (1n << 32n), false],
    [(5n << 64n) | 7n, (5n << 64n) | 8n, true],
    [(5n << 64n) | 7n, (6n << 64n) | 8n, false], // a higher word differs
    [(1n << 128n) - 1n, 0n, false], // the last address has no next one
  ])("IPv6 %p then %p: %p", (a, b, expected) => {
    expect(followsDirectly(words4(a), 0, words4(b), 0, 4)).toBe(expected);
  });

  test("IPv4: one word, at offsets", () => {
    const a = Uint32Array.of(9, 0xfffffffe, 0xffffffff);
    const b = Uint32Array.of(0xffffffff, 0, 10);
    expect(followsDirectly(a, 0, b, 2, 1)).toBe(true);
    expect(followsDirectly(a, 1, b, 0, 1)).toBe(true);
    expect(followsDirectly(a, 2, b, 1, 1)).toBe(false); // 255.255.255.255 is the last address
  });
});

test("unpackLayer gives back what packLayer packed", () => {
  const ranges = [
    { start: 0n, end: 0xffffffffn, value: 3 },
    { start: 1n << 32n, end: (1n << 127n) - 1n, value: 0 },
    { start: 1n << 127n, end: (1n << 128n) - 1n, value: 7 },
  ];
  expect(unpackLayer(packLayer(6, ranges))).toEqual(ranges);
  expect(unpackLayer(packLayer(4, [{ start: 5n, end: 0xffffffffn, value: 1 }]))).toEqual([{ start: 5n, end: 0xffffffffn, value: 1 }]);
});

import { expect, test } from "bun:test";
import { shortestFloat32 } from "../../../src/importer/mmdb/float32.ts";
import { random } from "./support.ts";

/** The definition, digit by digit. */
function reference(x: number): number {
  if (!Number.isFinite(x) || Math.fround(x) !== x) return x;
  for (let digits = 1; digits <= 9; digits++) {
    const shorter = Number(x.toPrecision(digits));
    if (Math.fround(shorter) === x) return shorter;
  }
  return x;
}

test.each([
  [23.13170051574707, 23.1317],
  [113.26599884033203, 113.266],
  [-33.86880111694336, -33.8688],
  [151.20899963378906, 151.209],
  [Math.fround(0.1), 0.1],
  [Math.fround(-89.99999), -89.99999],
  [Math.fround(1e-7), 1e-7],
  [Math.fround(16777217), 16777216],
  [0.5, 0.5],
  [0, 0],
  [180, 180],
  [0.1, 0.1], // not a float32: kept
  [113.26599884033204, 113.26599884033204],
  [Number.NaN, Number.NaN],
])("%p → %p", (x, expected) => {
  expect(shortestFloat32(x)).toBe(expected);
});

test("the same as the digit-by-digit definition on random floats, powers of two and subnormals", () => {
  const next = random(7);
  const words = new Uint32Array(1);
  const floats = new Float32Array(words.buffer);
  const mismatches: string[] = [];
  const check = (x: number) => {
    if (!Object.is(shortestFloat32(x), reference(x))) mismatches.push(`${x}: ${shortestFloat32(x)} ≠ ${reference(x)}`);
  };
  for (let i = 0; i < 200_000; i++) {
    words[0] = Math.floor(next() * 2 ** 32);
    check(floats[0]!);
    check(Math.fround((next() - 0.5) * 360));
  }
  for (let exponent = -149; exponent <= 127; exponent++) {
    check(2 ** exponent);
    check(-(2 ** exponent));
    check(Math.fround(2 ** exponent * 1.0000001));
    check(Math.fround(2 ** exponent * 0.9999999));
  }
  expect(mismatches.slice(0, 10)).toEqual([]);
});

import { expect, test } from "bun:test";
import { completeValues } from "../../../src/importer/mmdb/complete-values.ts";
import { packLayer, unpackLayer } from "../../../src/importer/packed-layer.ts";

test("values that become equal once completed share an index, and touching ranges with them merge, across a word carry too", () => {
  // Values 0 and 1 differ only in a key value 1 lacks: completed, 1 carries city null like 0.
  const values = [{ country_code: "DE", city: null }, { country_code: "DE" }, { country_code: "FR", city: "Paris" }];
  const v6 = packLayer(6, [
    { start: 0n, end: 0xffffffffn, value: 0 },
    { start: 0x1_0000_0000n, end: 0x1_ffff_ffffn, value: 1 }, // touches the one before: merged
    { start: 0x3_0000_0000n, end: 0x3_0000_00ffn, value: 1 }, // a gap before it: kept apart
    { start: 0x3_0000_0100n, end: 0x3_0000_01ffn, value: 2 },
    { start: 0x3_0000_0200n, end: (1n << 128n) - 1n, value: 0 },
  ]);
  const v4 = packLayer(4, [
    { start: 0n, end: 9n, value: 1 },
    { start: 10n, end: 0xffffffffn, value: 0 },
  ]);
  const completed = completeValues(["country_code", "city"], values, [v4, v6]);
  expect(completed.values).toEqual([{ country_code: "DE", city: null }, { country_code: "FR", city: "Paris" }]);
  expect(unpackLayer(completed.layers[0]!)).toEqual([{ start: 0n, end: 0xffffffffn, value: 0 }]);
  expect(unpackLayer(completed.layers[1]!)).toEqual([
    { start: 0n, end: 0x1_ffff_ffffn, value: 0 },
    { start: 0x3_0000_0000n, end: 0x3_0000_00ffn, value: 0 },
    { start: 0x3_0000_0100n, end: 0x3_0000_01ffn, value: 1 },
    { start: 0x3_0000_0200n, end: (1n << 128n) - 1n, value: 0 },
  ]);
});

test("values that all have every field are returned as they are", () => {
  const values = [{ country_code: "DE" }];
  const layer = packLayer(4, [{ start: 0n, end: 5n, value: 0 }]);
  const completed = completeValues(["country_code"], values, [layer]);
  expect(completed.values).toBe(values);
  expect(completed.layers[0]).toBe(layer);
});

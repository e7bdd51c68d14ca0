import { expect, test } from "bun:test";
import { readAddress } from "../../src/data-file/packed-address.ts";
import { joinParts, packPart } from "../../src/importer/join-parts.ts";
import { packLayer, type PackedLayer } from "../../src/importer/packed-layer.ts";
import type { FieldValues } from "../../src/index/record-fields.ts";
import type { SourceData } from "../../src/importer/source-data.ts";

const V6 = (hex: string) => BigInt(`0x${hex}`);

function part(values: FieldValues[], v4: Array<[number, number, number]>, v6: Array<[bigint, bigint, number]> = []): SourceData {
  return {
    fields: ["country_code"],
    values,
    v4: { rows: v4.length, ranges: v4.map(([start, end, value]) => ({ start: BigInt(start), end: BigInt(end), value })) },
    v6: { rows: v6.length, ranges: v6.map(([start, end, value]) => ({ start, end, value })) },
  };
}

/** A packed layer as [start, end, value's country] rows. */
function listed(layer: PackedLayer, values: readonly FieldValues[]) {
  return Array.from({ length: layer.length }, (_, i) => [
    readAddress(layer.starts, layer.words, i * layer.words),
    readAddress(layer.ends, layer.words, i * layer.words),
    values[layer.values[i] as number]?.country_code,
  ]);
}

test("an IPv4 file and an IPv6 file become one source with one table of values", () => {
  const v4 = packPart(part([{ country_code: "AU" }, { country_code: "US" }], [[10, 19, 1], [20, 29, 0]]));
  const v6 = packPart(part([{ country_code: "JP" }, { country_code: "US" }], [], [[V6("20010db8" + "0".repeat(24)), V6("20010db8" + "f".repeat(24)), 1]]));
  const joined = joinParts([v4, v6]);
  expect(joined.values).toEqual([{ country_code: "AU" }, { country_code: "US" }, { country_code: "JP" }]);
  expect(listed(joined[4], joined.values)).toEqual([[10n, 19n, "US"], [20n, 29n, "AU"]]);
  expect(listed(joined[6], joined.values)).toEqual([[V6("20010db8" + "0".repeat(24)), V6("20010db8" + "f".repeat(24)), "US"]]);
  expect(joined.rows).toEqual({ 4: 2, 6: 1 });
});

test("parts that overlap in a family: the later part wins where they do", () => {
  const first = packPart(part([{ country_code: "AU" }], [[0, 99, 0]]));
  const second = packPart(part([{ country_code: "NZ" }], [[50, 59, 0]]));
  const joined = joinParts([first, second]);
  expect(listed(joined[4], joined.values)).toEqual([[0n, 49n, "AU"], [50n, 59n, "NZ"], [60n, 99n, "AU"]]);
});

test("one part is passed through; packing keeps every address exactly, up to the last IPv6 address", () => {
  const max = (1n << 128n) - 1n;
  const only = packPart(part([{ country_code: "AU" }], [[0, 0xffffffff, 0]], [[max - 1n, max, 0]]));
  expect(joinParts([only])).toBe(only);
  expect(listed(only[4], only.values)).toEqual([[0n, 0xffffffffn, "AU"]]);
  expect(listed(packLayer(6, [{ start: 1n << 64n, end: max, value: 0 }]), only.values)).toEqual([[1n << 64n, max, "AU"]]);
});

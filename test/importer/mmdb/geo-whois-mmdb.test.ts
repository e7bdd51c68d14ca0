import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { packPart } from "../../../src/importer/join-parts.ts";
import { readMmdb } from "../../../src/importer/mmdb/read-mmdb.ts";
import type { SourceData, SourceLayer } from "../../../src/importer/source-data.ts";
import { compareWithReader } from "./reader-oracle.ts";
import { checkWellFormed } from "./support.ts";

/** ip-location-db's geo-whois-asn-country MMDBs (flat records, {"country_code": "AU"}). */
const DIR = "node_modules/@ip-location-db/geo-whois-asn-country-mmdb";
const read = (name: string): [Uint8Array, SourceData] => {
  const bytes = new Uint8Array(readFileSync(`${DIR}/${name}`));
  return [bytes, readMmdb(bytes, name)];
};
type FileName = "ipv4" | "ipv6" | "combined";
// Over a million ranges as objects with BigInts, held for this file only: its module stays
// loaded for the rest of the run.
let files: Record<FileName, [Uint8Array, SourceData]> | undefined = {
  ipv4: read("geo-whois-asn-country-ipv4.mmdb"),
  ipv6: read("geo-whois-asn-country-ipv6.mmdb"),
  combined: read("geo-whois-asn-country.mmdb"),
};
const file = (name: FileName) => files![name];
afterAll(() => {
  files = undefined;
  Bun.gc(true);
});

describe.each(["ipv4", "ipv6", "combined"] as const)("%s file", (name) => {
  test("agrees with mmdb-lib's Reader on random addresses and range edges", () => {
    const [bytes, data] = file(name);
    const result = compareWithReader(bytes, packPart(data), 1500, 400);
    expect(result.mismatches).toEqual([]);
    expect(result.checked4).toBeGreaterThan(data.v4.ranges.length > 0 ? 3000 : 1000);
    if (name !== "ipv4") expect(result.checked6).toBeGreaterThan(3000);
  });

  test("well-formed layers, country codes only", () => {
    const [, data] = file(name);
    expect(checkWellFormed(data.v4, 0xffffffffn)).toEqual([]);
    expect(checkWellFormed(data.v6, (1n << 128n) - 1n)).toEqual([]);
    expect(data.fields).toEqual(["country_code"]);
    expect(data.values.every((value) => /^[A-Z]{2}$/.test(String(value.country_code)))).toBe(true);
    expect(data.described?.builtAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/);
  });
});

test("the families as the single-family files hold them: the combined file is the two together", () => {
  const [[, ipv4], [, ipv6], [, combined]] = [file("ipv4"), file("ipv6"), file("combined")];
  expect(ipv4.v6).toEqual({ rows: 0, ranges: [] });
  expect(ipv6.v4).toEqual({ rows: 0, ranges: [] });
  const same = (a: SourceData, layerA: SourceLayer, b: SourceData, layerB: SourceLayer) => {
    expect(layerA.rows).toBe(layerB.rows);
    expect(layerA.ranges.length).toBe(layerB.ranges.length);
    const differing = layerA.ranges.filter((range, i) => {
      const other = layerB.ranges[i]!;
      return range.start !== other.start || range.end !== other.end || a.values[range.value]!.country_code !== b.values[other.value]!.country_code;
    });
    expect(differing.length).toBe(0);
  };
  same(combined, combined.v4, ipv4, ipv4.v4);
  same(combined, combined.v6, ipv6, ipv6.v6);
  expect(ipv4.described?.name).toBe("country ipv4");
  expect(combined.described?.name).toBe("country ipvAll");
});

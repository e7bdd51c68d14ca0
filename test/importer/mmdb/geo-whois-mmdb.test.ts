import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
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
const [ipv4Bytes, ipv4] = read("geo-whois-asn-country-ipv4.mmdb");
const [ipv6Bytes, ipv6] = read("geo-whois-asn-country-ipv6.mmdb");
const [combinedBytes, combined] = read("geo-whois-asn-country.mmdb");

describe.each([
  ["ipv4", ipv4Bytes, ipv4],
  ["ipv6", ipv6Bytes, ipv6],
  ["combined", combinedBytes, combined],
] as const)("%s file", (_name, bytes, data) => {
  test("agrees with mmdb-lib's Reader on random addresses and range edges", () => {
    const result = compareWithReader(bytes, data, 1500, 400);
    expect(result.mismatches).toEqual([]);
    expect(result.checked4).toBeGreaterThan(data.v4.ranges.length > 0 ? 3000 : 1000);
    if (data !== ipv4) expect(result.checked6).toBeGreaterThan(3000);
  });

  test("well-formed layers, country codes only", () => {
    expect(checkWellFormed(data.v4, 0xffffffffn)).toEqual([]);
    expect(checkWellFormed(data.v6, (1n << 128n) - 1n)).toEqual([]);
    expect(data.fields).toEqual(["country_code"]);
    expect(data.values.every((value) => /^[A-Z]{2}$/.test(String(value.country_code)))).toBe(true);
    expect(data.described?.builtAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/);
  });
});

test("the families as the single-family files hold them: the combined file is the two together", () => {
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

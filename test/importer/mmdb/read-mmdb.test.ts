import { describe, expect, test } from "bun:test";
import { Reader } from "mmdb-lib";
import { readMmdb } from "../../../src/importer/mmdb/read-mmdb.ts";
import { fieldValuesOf } from "../../../src/importer/mmdb/mmdb-fields.ts";
import { double, float, uint32, writeMmdb, type MmdbNetwork } from "../../support/mmdb-writer.ts";
import { address, checkWellFormed, listed, valueAt } from "./support.ts";

const AU = { country_code: "AU" };
const CN = { country_code: "CN" };
const US = { country_code: "US" };
const CA = { country_code: "CA" };
const JP = { country_code: "JP" };

const ipv4Networks: MmdbNetwork[] = [
  { network: "0.0.0.0/32", value: JP },
  { network: "1.0.0.0/24", value: AU },
  { network: "1.0.1.0/24", value: CN },
  { network: "1.0.2.0/23", value: CN }, // touches 1.0.1.0/24 with the same value: one range
  { network: "1.0.5.0/24", value: CN }, // same value after a gap: a range of its own
  { network: "10.0.0.0/8", value: US },
  { network: "10.1.0.0/16", value: CA }, // nested: splits 10.0.0.0/8 around it
  { network: "255.255.255.255/32", value: JP },
];

const ipv4Expected = [
  ["0.0.0.0", "0.0.0.0", { country_code: "JP" }],
  ["1.0.0.0", "1.0.0.255", { country_code: "AU" }],
  ["1.0.1.0", "1.0.3.255", { country_code: "CN" }],
  ["1.0.5.0", "1.0.5.255", { country_code: "CN" }],
  ["10.0.0.0", "10.0.255.255", { country_code: "US" }],
  ["10.1.0.0", "10.1.255.255", { country_code: "CA" }],
  ["10.2.0.0", "10.255.255.255", { country_code: "US" }],
  ["255.255.255.255", "255.255.255.255", { country_code: "JP" }],
];

describe.each([24, 28, 32] as const)("record size %d", (recordSize) => {
  test("an IPv4 tree: nested networks, gaps, equal neighbours merged, both ends of the space", () => {
    const { bytes } = writeMmdb({ ipVersion: 4, recordSize, networks: ipv4Networks });
    const data = readMmdb(bytes, "v4.mmdb");
    expect(listed(data, data.v4, 4)).toEqual(ipv4Expected as never);
    expect(data.v6).toEqual({ rows: 0, ranges: [] });
    // 10.0.0.0/8 around 10.1.0.0/16 is 10.0/16 and 10.2/15 … 10.128/9: 9 leaves
    expect(data.v4.rows).toBe(6 + 9);
    expect(data.fields).toEqual(["country_code"]);
    expect(data.values).toEqual([JP, AU, CN, US, CA]);
    // one past each end: the next range or nothing
    expect(valueAt(data, data.v4, address("0.0.0.1"))).toBeUndefined();
    expect(valueAt(data, data.v4, address("0.255.255.255"))).toBeUndefined();
    expect(valueAt(data, data.v4, address("1.0.4.0"))).toBeUndefined();
    expect(valueAt(data, data.v4, address("1.0.6.0"))).toBeUndefined();
    expect(valueAt(data, data.v4, address("10.1.0.0"))).toEqual(CA);
    expect(valueAt(data, data.v4, address("11.0.0.0"))).toBeUndefined();
    expect(valueAt(data, data.v4, address("255.255.255.254"))).toBeUndefined();
  });

  test("an IPv6 tree: IPv4 from ::/96, aliases of it left out of IPv6", () => {
    const written = writeMmdb({
      ipVersion: 6,
      recordSize,
      networks: [...ipv4Networks, { network: "64:ff9b::/96", value: AU }, { network: "2000::/3", value: US }, { network: "2c0f:ffff::/32", value: CN }],
      aliases: ["::ffff:0:0/96", "2001::/32", "2002::/16"],
    });
    const data = readMmdb(written.bytes, "v6.mmdb");
    expect(listed(data, data.v4, 4)).toEqual(ipv4Expected as never);
    expect(listed(data, data.v6, 6)).toEqual([
      ["64:ff9b:0:0:0:0:0:0", "64:ff9b:0:0:0:0:ffff:ffff", AU],
      ["2000:0:0:0:0:0:0:0", "2000:ffff:ffff:ffff:ffff:ffff:ffff:ffff", US],
      ["2001:1:0:0:0:0:0:0", "2001:ffff:ffff:ffff:ffff:ffff:ffff:ffff", US],
      ["2003:0:0:0:0:0:0:0", "2c0f:fffe:ffff:ffff:ffff:ffff:ffff:ffff", US],
      ["2c0f:ffff:0:0:0:0:0:0", "2c0f:ffff:ffff:ffff:ffff:ffff:ffff:ffff", CN],
      ["2c10:0:0:0:0:0:0:0", "3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", US],
    ] as never);
    expect(data.v4.rows).toBe(15);
    expect(checkWellFormed(data.v6, (1n << 128n) - 1n)).toEqual([]);
    // mmdb-lib agrees where the tree is not aliased, and reads IPv4 through the aliases
    const reader = new Reader<Record<string, unknown>>(Buffer.from(written.bytes));
    expect(reader.get("2001:1::")).toEqual(US);
    expect(reader.get("::ffff:10.1.2.3")).toEqual(CA);
    expect(reader.get("2002:a01:203::")).toEqual(CA);
    expect(reader.get("10.1.2.3")).toEqual(CA);
    expect(valueAt(data, data.v6, address("2002:a01:203::"))).toBeUndefined();
    expect(valueAt(data, data.v6, address("::ffff:a01:203"))).toBeUndefined();
    expect(valueAt(data, data.v6, address("2001::1"))).toBeUndefined();
  });
});

describe("where IPv4 starts in an IPv6 tree", () => {
  test("a leaf above ::/96 covers all of IPv4, and IPv6 from 2^32 on", () => {
    const { bytes } = writeMmdb({ ipVersion: 6, networks: [{ network: "::/64", value: AU }, { network: "2000::/3", value: AU }] });
    const data = readMmdb(bytes, "f.mmdb");
    expect(listed(data, data.v4, 4)).toEqual([["0.0.0.0", "255.255.255.255", AU]] as never);
    expect(listed(data, data.v6, 6)).toEqual([
      ["0:0:0:0:0:1:0:0", "0:0:0:0:ffff:ffff:ffff:ffff", AU],
      ["2000:0:0:0:0:0:0:0", "3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", AU],
    ] as never);
    expect([data.v4.rows, data.v6.rows]).toEqual([1, 2]);
  });

  test("a leaf at ::/96 is IPv4 only", () => {
    const { bytes } = writeMmdb({ ipVersion: 6, networks: [{ network: "::/96", value: AU }, { network: "::1:0:0/96", value: CN }] });
    const data = readMmdb(bytes, "f.mmdb");
    expect(listed(data, data.v4, 4)).toEqual([["0.0.0.0", "255.255.255.255", AU]] as never);
    expect(listed(data, data.v6, 6)).toEqual([["0:0:0:0:0:1:0:0", "0:0:0:0:0:1:ffff:ffff", CN]] as never);
  });

  test("an empty ::/96: no IPv4", () => {
    const { bytes } = writeMmdb({ ipVersion: 6, networks: [{ network: "2001:db8::/32", value: AU }] });
    const data = readMmdb(bytes, "f.mmdb");
    expect(data.v4).toEqual({ rows: 0, ranges: [] });
    expect(listed(data, data.v6, 6)).toEqual([["2001:db8:0:0:0:0:0:0", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", AU]] as never);
  });
});

test("different records with the same mapped value are one value and merge", () => {
  const { bytes } = writeMmdb({
    ipVersion: 4,
    networks: [
      { network: "1.0.0.0/24", value: { country_code: "AU", note: "a" } },
      { network: "1.0.1.0/24", value: { country_code: "au", note: "b" } },
      { network: "1.0.2.0/24", value: { country_code: "AU" } },
    ],
  });
  const data = readMmdb(bytes, "f.mmdb");
  expect(listed(data, data.v4, 4)).toEqual([["1.0.0.0", "1.0.2.255", AU]] as never);
  expect(data.values).toEqual([AU]);
  expect(data.v4.rows).toBe(3);
});

test("a long run of equal leaves at the deepest level merges into one range", () => {
  const networks = Array.from({ length: 300 }, (_, i) => ({ network: `192.0.${i >> 8}.${i & 255}/32`, value: i === 150 ? CN : AU }));
  const { bytes } = writeMmdb({ ipVersion: 4, networks, dedupe: false });
  const data = readMmdb(bytes, "f.mmdb");
  expect(listed(data, data.v4, 4)).toEqual([
    ["192.0.0.0", "192.0.0.149", AU],
    ["192.0.0.150", "192.0.0.150", CN],
    ["192.0.0.151", "192.0.1.43", AU],
  ] as never);
  expect(data.v4.rows).toBe(300);
});

test("GeoIP2 City records with floats and doubles, networks known only to the country get nulls", () => {
  const city = {
    city: { geoname_id: uint32(2147714), names: { en: "Sydney", de: "Sydney" } },
    continent: { code: "OC", names: { en: "Oceania" } },
    country: { iso_code: "AU", names: { en: "Australia" } },
    location: { accuracy_radius: 1000, latitude: double(-33.8715), longitude: float(151.2006), time_zone: "Australia/Sydney" },
    postal: { code: "2000" },
    registered_country: { iso_code: "AU" },
    subdivisions: [{ iso_code: "NSW", names: { en: "New South Wales" } }],
  };
  const countryOnly = { continent: { code: "EU" }, country: { iso_code: "DE" }, registered_country: { iso_code: "DE" } };
  const { bytes } = writeMmdb({
    ipVersion: 6,
    recordSize: 24,
    databaseType: "GeoLite2-City",
    description: { en: "GeoLite2 City database", de: "GeoLite2 Stadt" },
    buildEpoch: 1_700_000_000,
    networks: [
      { network: "1.0.0.0/24", value: city },
      { network: "2a00::/16", value: countryOnly },
    ],
  });
  const data = readMmdb(bytes, "GeoLite2-City.mmdb");
  expect(data.fields).toEqual(["country_code", "city", "region", "postal_code", "latitude", "longitude", "time_zone", "continent_code"]);
  expect(listed(data, data.v4, 4)).toEqual([
    [
      "1.0.0.0",
      "1.0.0.255",
      { country_code: "AU", city: "Sydney", region: "New South Wales", postal_code: "2000", latitude: -33.8715, longitude: 151.2006, time_zone: "Australia/Sydney", continent_code: "OC" },
    ],
  ] as never);
  expect(data.values[data.v6.ranges[0]!.value]).toEqual({
    country_code: "DE",
    city: null,
    region: null,
    postal_code: null,
    latitude: null,
    longitude: null,
    time_zone: null,
    continent_code: "EU",
  });
  expect(data.described).toEqual({ name: "GeoLite2-City (GeoLite2 City database)", builtAt: "2023-11-14T22:13:20.000Z" });
});

test("the flat ip-location-db layout, as mmdb-lib reads it", () => {
  const guangzhou = { city: "Guangzhou", country_code: "CN", latitude: float(23.1317), longitude: float(113.266), postcode: "", state1: "Guangdong", state2: "", timezone: "" };
  const { bytes } = writeMmdb({ ipVersion: 4, databaseType: "city ipv4", networks: [{ network: "1.0.8.0/21", value: guangzhou }] });
  const data = readMmdb(bytes, "city.mmdb");
  const expected = { country_code: "CN", city: "Guangzhou", region: "Guangdong", postal_code: null, latitude: 23.1317, longitude: 113.266, time_zone: null };
  expect(data.values).toEqual([expected]);
  expect(fieldValuesOf(new Reader(Buffer.from(bytes)).get("1.0.8.1"))).toEqual(expected);
  expect(data.described).toEqual({ name: "city ipv4", builtAt: "2025-06-15T15:06:40.000Z" });
});

test("progress: nodes visited out of the node count, ending at the number visited", () => {
  const networks = Array.from({ length: 100_000 }, (_, i) => ({ network: `${10 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}.0/24`, value: i % 3 === 0 ? AU : CN }));
  const written = writeMmdb({ ipVersion: 4, networks });
  const calls: Array<[number, number]> = [];
  const data = readMmdb(written.bytes, "f.mmdb", (done, total) => calls.push([done, total]));
  expect(calls.length).toBeGreaterThan(1);
  expect(calls.every(([, total]) => total === written.nodeCount)).toBe(true);
  expect(calls.map(([done]) => done)).toEqual([...calls.map(([done]) => done)].sort((a, b) => a - b));
  expect(calls.at(-1)).toEqual([written.nodeCount, written.nodeCount]);
  expect(data.v4.rows).toBe(100_000);
});

import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseAddress } from "../../src/address/parse.ts";
import { RangeIndex } from "../../src/index/range-index.ts";
import { double, uint32, writeMmdb } from "../support/mmdb-writer.ts";
import { cli } from "../support/server-process.ts";
import { hostingBy, NO_SIGNAL_SOURCE, NOT_HOSTING } from "../support/privacy.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-maxmind-import-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const berlin = {
  city: { geoname_id: uint32(2950159), names: { de: "Berlin", en: "Berlin" } },
  continent: { code: "EU", geoname_id: uint32(6255148), names: { en: "Europe" } },
  country: { iso_code: "DE", names: { en: "Germany" } },
  location: { accuracy_radius: 20, latitude: double(52.5244), longitude: double(13.4105), time_zone: "Europe/Berlin" },
  postal: { code: "10115" },
  subdivisions: [{ iso_code: "BE", names: { en: "Land Berlin" } }],
};

test("GeoLite2-style City and ASN files: nested records, continents, the licence recognised, the larger ASN block beside the city block", () => {
  const city = join(dir, "GeoLite2-City.mmdb");
  const asn = join(dir, "GeoLite2-ASN.mmdb");
  writeFileSync(
    city,
    writeMmdb({
      ipVersion: 6,
      databaseType: "GeoLite2-City",
      buildEpoch: Date.UTC(2026, 10, 20) / 1000,
      networks: [
        { network: "5.9.0.0/16", value: berlin },
        { network: "2a01:4f8::/32", value: berlin },
        // Known only at country level: no city, no postal code.
        { network: "5.10.0.0/16", value: { continent: { code: "EU" }, country: { iso_code: "DE" }, location: { latitude: double(51.2993), longitude: double(9.491), time_zone: "Europe/Berlin" } } },
      ],
    }).bytes,
  );
  writeFileSync(
    asn,
    writeMmdb({
      ipVersion: 6,
      databaseType: "GeoLite2-ASN",
      networks: [
        { network: "5.8.0.0/15", value: { autonomous_system_number: uint32(24940), autonomous_system_organization: "Hetzner Online GmbH" } },
        { network: "2a01:4f8::/29", value: { autonomous_system_number: uint32(24940), autonomous_system_organization: "Hetzner Online GmbH" } },
      ],
    }).bytes,
  );
  const path = join(dir, "geolite.db");
  const imported = cli(["data", "import", "--data", path, city, asn]);
  expect(imported.code).toBe(0);
  const index = RangeIndex.open(path);
  const look = (text: string) => {
    const hit = index.lookup(parseAddress(text)!);
    return hit && { network: hit.network, ...hit.record };
  };
  expect(index.info.fields).toEqual([
    "asn", "as_name", "country_code", "country", "city", "region", "postal_code", "latitude", "longitude", "time_zone", "continent_code", "continent", "privacy",
  ]);
  expect(look("5.9.1.2")).toEqual({
    network: "5.9.0.0/16",
    asn: 24940,
    as_name: "Hetzner Online GmbH",
    country_code: "DE",
    country: "Germany",
    city: "Berlin",
    region: "Land Berlin",
    postal_code: "10115",
    latitude: 52.5244,
    longitude: 13.4105,
    time_zone: "Europe/Berlin",
    continent_code: "EU",
    continent: "Europe",
    privacy: NO_SIGNAL_SOURCE,
  });
  expect(look("5.10.0.1")).toMatchObject({ network: "5.10.0.0/16", city: null, postal_code: null, country_code: "DE", continent: "Europe", asn: null });
  // The ASN file's block is larger than the city file's: the rest has the ASN only.
  expect(look("2a01:4f9::1")).toMatchObject({ network: "2a01:4f9::/32", asn: 24940, city: null, continent: null });
  expect(look("2a01:4f8::1")).toMatchObject({ network: "2a01:4f8::/32", city: "Berlin", asn: 24940 });

  expect(index.info.sources).toMatchObject([
    { name: "GeoLite2-City", format: "mmdb", license: "GeoLite2 End User License Agreement", builtAt: "2026-11-20T00:00:00.000Z" },
    { name: "GeoLite2-ASN", format: "mmdb", license: "GeoLite2 End User License Agreement" },
  ]);
  expect(index.info.sources[0]!.attribution).toContain("This product includes GeoLite2 data created by MaxMind");
  expect(imported.stdout).not.toContain("is not known");
});

test("--with-default: a city file in front of the default ASN and country data, whose sources and licences come along", () => {
  const city = join(dir, "city-only.mmdb");
  writeFileSync(
    city,
    writeMmdb({
      ipVersion: 6,
      databaseType: "GeoLite2-City",
      networks: [{ network: "1.1.1.0/24", value: { ...berlin, country: { iso_code: "DE" } } }],
    }).bytes,
  );
  const path = join(dir, "with-default.db");
  const imported = cli(["data", "import", "--data", path, "--with-default", city]);
  expect(imported.code).toBe(0);
  const index = RangeIndex.open(path);
  const look = (text: string) => {
    const hit = index.lookup(parseAddress(text)!);
    return hit && { network: hit.network, ...hit.record };
  };
  // The city file wins where it has a value (its country), the default data fills the rest.
  expect(look("1.1.1.1")).toMatchObject({ network: "1.1.1.0/24", asn: 13335, as_name: "Cloudflare, Inc.", country_code: "DE", country: "Germany", city: "Berlin" });
  expect(look("8.8.8.8")).toMatchObject({ network: "8.8.8.0/24", asn: 15169, country_code: "US", city: null, continent: null });
  // The default data's hosting list comes along, and answers by the new records' AS numbers.
  expect(look("1.1.1.1")?.privacy).toEqual(hostingBy("Cloudflare"));
  expect(look("8.8.8.8")?.privacy).toEqual(NOT_HOSTING);
  expect(look("2606:4700:4700::1111")).toMatchObject({ asn: 13335, city: null });
  expect(index.info.sources.map((source) => [source.name, source.license])).toEqual([
    ["GeoLite2-City", "GeoLite2 End User License Agreement"],
    ["ASN (RouteViews, NRO, DB-IP)", "CC BY 4.0"],
    ["Country (geo-whois-asn-country)", "CC0"],
    ["Hosting and cloud providers' AS numbers", "MIT (part of iplookup)"],
  ]);
  expect(index.info.sources[1]!.attribution).toContain("RouteViews");
  expect(index.hostingOfAsn(13335)).toBe(true);
});

import { expect, test } from "bun:test";
import { fieldValuesOf } from "../../../src/importer/mmdb/mmdb-fields.ts";

/** What each layout's records map to. */
test.each([
  // GeoIP2 / GeoLite2 City (and DB-IP lite, same layout); names are never taken
  [
    "GeoLite2 City",
    {
      city: { geoname_id: 2147714, names: { en: "Sydney", ja: "シドニー" } },
      continent: { code: "OC", geoname_id: 6255151, names: { en: "Oceania" } },
      country: { geoname_id: 2077456, iso_code: "AU", names: { en: "Australia" } },
      location: { accuracy_radius: 1000, latitude: -33.8715, longitude: 151.2006, time_zone: "Australia/Sydney" },
      postal: { code: "2000" },
      registered_country: { iso_code: "AU", names: { en: "Australia" } },
      subdivisions: [{ iso_code: "NSW", names: { en: "New South Wales" } }, { iso_code: "X", names: { en: "Second" } }],
    },
    { country_code: "AU", continent_code: "OC", city: "Sydney", region: "New South Wales", postal_code: "2000", latitude: -33.8715, longitude: 151.2006, time_zone: "Australia/Sydney" },
  ],
  [
    "GeoLite2 City, a network known to the country only, registered elsewhere",
    { continent: { code: "EU" }, registered_country: { iso_code: "FR" }, location: { accuracy_radius: 500, latitude: 47, longitude: 8 } },
    { country_code: "FR", continent_code: "EU", city: null, region: null, postal_code: null, latitude: 47, longitude: 8, time_zone: null },
  ],
  [
    "GeoLite2 Country",
    { continent: { code: "na" }, country: { iso_code: "us" }, registered_country: { iso_code: "US" } },
    { country_code: "US", continent_code: "NA" },
  ],
  ["GeoLite2 Country, registered country only", { registered_country: { iso_code: "GB" } }, { country_code: "GB", continent_code: null }],
  [
    "DB-IP City lite (GeoIP2 layout), empty and missing names",
    { city: { names: { de: "Wien" } }, continent: { code: "" }, country: { iso_code: "" }, location: { latitude: 48.2085, longitude: 16.3721 }, subdivisions: [] },
    { country_code: null, continent_code: null, city: null, region: null, postal_code: null, latitude: 48.2085, longitude: 16.3721, time_zone: null },
  ],
  ["GeoLite2 ASN", { autonomous_system_number: 13335, autonomous_system_organization: "CLOUDFLARENET" }, { asn: 13335, as_name: "CLOUDFLARENET" }],
  ["GeoLite2 ASN, empty organisation", { autonomous_system_number: 0, autonomous_system_organization: "" }, { asn: 0, as_name: null }],
  ["ASN as uint64", { autonomous_system_number: 4294967295n }, { asn: 4294967295 }],
  ["ASN too large", { autonomous_system_number: 4294967296 }, { asn: null }],
  ["ASN too large as uint64", { autonomous_system_number: 4294967296n }, { asn: null }],
  ["ASN negative (int32)", { autonomous_system_number: -1 }, { asn: null }],
  ["ASN not an integer", { autonomous_system_number: 1.5 }, { asn: null }],
  ["ASN as text", { autonomous_system_number: "13335" }, { asn: null }],
  // ip-location-db flat layouts
  [
    "ip-location-db city",
    { city: "Guangzhou", country_code: "CN", latitude: 23.13170051574707, longitude: 113.26599884033203, postcode: "", state1: "Guangdong", state2: "", timezone: "" },
    { country_code: "CN", city: "Guangzhou", region: "Guangdong", postal_code: null, latitude: 23.1317, longitude: 113.266, time_zone: null },
  ],
  [
    "ip-location-db city, every field",
    { city: "Vienna", country_code: "at", latitude: 48.20849, longitude: 16.37208, postcode: "1010", state1: "Vienna", state2: "Wien", timezone: "Europe/Vienna" },
    { country_code: "AT", city: "Vienna", region: "Vienna", postal_code: "1010", latitude: 48.20849, longitude: 16.37208, time_zone: "Europe/Vienna" },
  ],
  ["ip-location-db country", { country_code: "TH" }, { country_code: "TH" }],
  ["ip-location-db country, lower case", { country_code: "th" }, { country_code: "TH" }],
  ["ip-location-db country, not two letters", { country_code: "THA" }, { country_code: null }],
  ["ip-location-db country, empty", { country_code: "" }, { country_code: null }],
  ["ip-location-db country, digits", { country_code: "1A" }, { country_code: null }],
  // IPinfo lite
  [
    "IPinfo lite",
    { asn: "AS13335", as_domain: "cloudflare.com", as_name: "Cloudflare, Inc.", continent: "Oceania", continent_code: "OC", country: "Australia", country_code: "AU" },
    { asn: 13335, as_name: "Cloudflare, Inc.", country_code: "AU", continent_code: "OC" },
  ],
  ["IPinfo lite, no AS", { asn: "", as_name: "", continent_code: "eu", country_code: "de" }, { asn: null, as_name: null, country_code: "DE", continent_code: "EU" }],
  ["IPinfo lite, lower-case as", { asn: "as64500", as_name: "Example" }, { asn: 64500, as_name: "Example" }],
  ["IPinfo lite, bad asn", { asn: "AS", as_name: "X" }, { asn: null, as_name: "X" }],
  ["IPinfo lite, asn past 32 bits", { asn: "AS4294967296" }, { asn: null }],
  ["IPinfo lite, asn with junk", { asn: "AS123x" }, { asn: null }],
  ["IPinfo lite, continent code too long", { continent_code: "EUR" }, { continent_code: null }],
  // coordinates
  ["latitude out of range", { country_code: "AQ", latitude: -90.5, longitude: 180.5 }, { country_code: "AQ", latitude: null, longitude: null }],
  ["coordinates at the limits", { latitude: -90, longitude: 180 }, { latitude: -90, longitude: 180 }],
  ["coordinates not numbers", { latitude: "1.5", longitude: null }, { latitude: null, longitude: null }],
  ["coordinates not finite", { latitude: Number.NaN, longitude: Number.POSITIVE_INFINITY }, { latitude: null, longitude: null }],
  ["a double coordinate stays as it is", { latitude: 0.1, longitude: 113.26599884033204 }, { latitude: 0.1, longitude: 113.26599884033204 }],
  // not records
  ["unknown keys", { foo: "bar", names: { en: "x" } }, {}],
  ["an array", [1, 2], {}],
  ["a string", "AU", {}],
  ["null", null, {}],
])("%s", (_name, record, expected) => {
  expect(fieldValuesOf(record)).toEqual(expected as never);
});

test("names are never mapped, only codes", () => {
  const values = fieldValuesOf({ country: { iso_code: "AU", names: { en: "Australia" } }, continent: { code: "OC", names: { en: "Oceania" } } });
  expect(values).not.toHaveProperty("country");
  expect(values).not.toHaveProperty("continent");
});

import type { FieldValue, FieldValues } from "../../index/record-fields.ts";
import { keptCountryCode } from "../country-names.ts";
import { shortestFloat32 } from "./float32.ts";

/**
 * Maps one MMDB record, as decoded, to our fields. Each layout below adds only the fields
 * it has; a record of an unknown layout gives {}. Country and continent names are never
 * taken from the file: they are derived from the codes later.
 */
export function fieldValuesOf(record: unknown): FieldValues {
  const values: FieldValues = {};
  if (!isObject(record)) return values;
  asnLayout(record, values);
  flatLayout(record, values);
  geoIp2Layout(record, values);
  return values;
}

/**
 * MaxMind GeoIP2/GeoLite2 City and Country, and DB-IP's lite MMDBs (same layout): nested
 * `country`, `registered_country`, `continent`, and for City `city`, `subdivisions`,
 * `postal` and `location`. The codes come with any of these sections; the city fields
 * with any of the City sections. Wins over the flat keys when a record has both.
 */
function geoIp2Layout(record: Record<string, unknown>, values: FieldValues): void {
  const { country, registered_country, continent, city, subdivisions, postal, location } = record;
  const cityLevel = isObject(city) || Array.isArray(subdivisions) || isObject(postal) || isObject(location);
  if (!cityLevel && !isObject(country) && !isObject(registered_country) && !isObject(continent)) return;
  values.country_code = countryCode(at(country, "iso_code")) ?? countryCode(at(registered_country, "iso_code"));
  values.continent_code = twoLetterCode(at(continent, "code"));
  if (!cityLevel) return;
  const firstSubdivision = Array.isArray(subdivisions) ? subdivisions[0] : undefined;
  values.city = text(at(at(city, "names"), "en"));
  values.region = text(at(at(firstSubdivision, "names"), "en"));
  values.postal_code = text(at(postal, "code"));
  values.latitude = coordinate(at(location, "latitude"), 90);
  values.longitude = coordinate(at(location, "longitude"), 180);
  values.time_zone = text(at(location, "time_zone"));
}

/**
 * GeoLite2/GeoIP2 ASN (`autonomous_system_number`, `autonomous_system_organization`),
 * and IPinfo lite (`asn` as "AS13335", `as_name`).
 */
function asnLayout(record: Record<string, unknown>, values: FieldValues): void {
  if ("autonomous_system_number" in record) values.asn = asNumber(record.autonomous_system_number);
  if ("autonomous_system_organization" in record) values.as_name = text(record.autonomous_system_organization);
  if ("asn" in record) values.asn = asNumber(record.asn);
  if ("as_name" in record) values.as_name = text(record.as_name);
}

/**
 * Flat records with top-level strings and numbers: ip-location-db's MMDBs (`country_code`,
 * `state1`, `city`, `postcode`, `latitude`, `longitude`, `timezone`; often just
 * `country_code`) and the codes of IPinfo lite (`country_code`, `continent_code`).
 */
function flatLayout(record: Record<string, unknown>, values: FieldValues): void {
  if ("country_code" in record) values.country_code = countryCode(record.country_code);
  if ("continent_code" in record) values.continent_code = twoLetterCode(record.continent_code);
  if ("city" in record && !isObject(record.city)) values.city = text(record.city);
  if ("state1" in record) values.region = text(record.state1);
  if ("postcode" in record) values.postal_code = text(record.postcode);
  if ("latitude" in record) values.latitude = coordinate(record.latitude, 90);
  if ("longitude" in record) values.longitude = coordinate(record.longitude, 180);
  if ("timezone" in record) values.time_zone = text(record.timezone);
}

/** The keys of a record that fieldValuesOf reads, by layout, as a refusal names them. */
export const MMDB_KEYS_READ = [
  "autonomous_system_number and autonomous_system_organization (GeoLite2/GeoIP2 ASN)",
  "asn, as_name, country_code and continent_code (IPinfo lite)",
  "country, registered_country, continent, city, subdivisions, postal and location (GeoLite2/GeoIP2 Country and City, DB-IP lite)",
  "country_code, state1, city, postcode, latitude, longitude and timezone (ip-location-db)",
].join("; ");

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function at(value: unknown, key: string): unknown {
  return isObject(value) ? value[key] : undefined;
}

/** A non-empty string, else null. */
function text(value: unknown): FieldValue {
  return typeof value === "string" && value !== "" ? value : null;
}

/** A continent code: two letters, upper-cased; anything else is null. */
function twoLetterCode(value: unknown): string | null {
  return typeof value === "string" && /^[A-Za-z]{2}$/.test(value) ? value.toUpperCase() : null;
}

/** A country code: as twoLetterCode, and null for a code ISO 3166-1 leaves to users (keptCountryCode). */
function countryCode(value: unknown): string | null {
  const letters = twoLetterCode(value);
  return letters === null ? null : keptCountryCode(letters);
}

/** An AS number 0 … 2^32-1, given as a number, a BigInt (uint64 fields) or "AS13335". */
function asNumber(value: unknown): number | null {
  let n: number;
  if (typeof value === "number") n = value;
  else if (typeof value === "bigint") n = value <= 0xffffffffn && value >= 0n ? Number(value) : -1;
  else if (typeof value === "string" && /^AS[0-9]{1,10}$/i.test(value)) n = Number(value.slice(2));
  else return null;
  return Number.isInteger(n) && n >= 0 && n <= 0xffffffff ? n : null;
}

/** A finite number within ±limit, as the shortest decimal when it is a 32-bit float. */
function coordinate(value: unknown, limit: number): number | null {
  if (typeof value !== "number" || !Number.isFinite(value) || value < -limit || value > limit) return null;
  return shortestFloat32(value);
}

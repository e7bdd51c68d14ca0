import { expect, test } from "bun:test";
import { parseAddress } from "../../src/address/parse.ts";
import { countryName, keptCountryCode } from "../../src/importer/country-names.ts";
import { toLookupResult } from "../../src/lookup/lookup-result.ts";
import { defaultIndex } from "../support/default-data.ts";
import { readDelimited } from "../../src/importer/delimited/read-delimited.ts";
import { fieldValuesOf } from "../../src/importer/mmdb/mmdb-fields.ts";

/**
 * An answer's country_code is an ISO 3166-1 alpha-2 code (CONTRACT §1): the codes ISO
 * leaves to users that sources use for "unknown" (DB-IP's ZZ) or areas of their own are
 * kept as no country; every other code as it is, upper-cased.
 */

test("user-assigned codes that sources use (QM–QZ, XA–XZ but XK, ZZ) are no country; every other code is kept, upper-cased", () => {
  for (const code of ["ZZ", "zz", "QM", "QZ", "XA", "XJ", "XL", "XX", "XZ"]) expect({ code, kept: keptCountryCode(code) }).toEqual({ code, kept: null });
  const kept: [string, string][] = [["au", "AU"], ["XK", "XK"], ["GB", "GB"], ["QL", "QL"], ["YE", "YE"], ["ZW", "ZW"]];
  for (const [code, upper] of kept) expect(keptCountryCode(code)).toBe(upper);
});

test("codes for a group of countries (AP, EU, EZ, UN) are no country, as a source writes them or an MMDB", () => {
  for (const code of ["AP", "ap", "EU", "eu", "EZ", "UN"]) expect({ code, kept: keptCountryCode(code) }).toEqual({ code, kept: null });
  const data = readDelimited("1.0.0.0,1.0.0.255,AP\n1.0.1.0,1.0.1.255,EU\n", { format: "country-csv", file: "country-ipv4.csv" });
  expect(data.values).toEqual([{ country_code: null }]);
  expect(fieldValuesOf({ country: { iso_code: "EU" }, registered_country: { iso_code: "DE" } })).toMatchObject({ country_code: "DE" });
  expect(fieldValuesOf({ country_code: "AP" })).toMatchObject({ country_code: null });
});

test("a country CSV's ZZ row answers no country; its XK row Kosovo's code", () => {
  const data = readDelimited("1.0.0.0,1.0.0.255,ZZ\n1.0.1.0,1.0.1.255,XK\n1.0.2.0,1.0.2.255,xa\n", { format: "country-csv", file: "country-ipv4.csv" });
  const values = (first: number) => {
    const row = data.v4.ranges.find((range) => range.start <= BigInt(first) && BigInt(first) <= range.end);
    return row === undefined ? undefined : data.values[row.value];
  };
  expect(values(0x01000000)).toEqual({ country_code: null });
  expect(values(0x01000100)).toEqual({ country_code: "XK" });
  expect(values(0x01000200)).toEqual({ country_code: null });
});

test("an MMDB's ZZ answers no country, falling back to the registered country as an empty code does", () => {
  expect(fieldValuesOf({ country: { iso_code: "ZZ" }, registered_country: { iso_code: "DE" } })).toMatchObject({ country_code: "DE" });
  expect(fieldValuesOf({ country: { iso_code: "ZZ" } })).toMatchObject({ country_code: null });
  expect(fieldValuesOf({ country_code: "ZZ", city: "x" })).toMatchObject({ country_code: null });
  expect(fieldValuesOf({ country_code: "xk" })).toMatchObject({ country_code: "XK" });
});

test("a code withdrawn for several countries keeps its own name, not CLDR's name of the first of them", () => {
  expect(countryName("AN")).toBe("Netherlands Antilles");
  expect(countryName("CW")).toBe("Curaçao");
  expect(countryName("YU")).toBe("Yugoslavia");
  // Withdrawn for one successor: the same place, under its name now.
  expect(countryName("TP")).toBe("Timor-Leste");
  // The default data's AN row (NRO's delegated data) answers with its own name.
  const index = defaultIndex();
  const address = parseAddress("2401:b60:1a10::")!;
  expect(toLookupResult(address, index.lookup(address), index.notFoundRecord)).toMatchObject({ country_code: "AN", country: "Netherlands Antilles" });
});

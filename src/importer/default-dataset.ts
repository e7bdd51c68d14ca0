import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { SourceSpec } from "./source.ts";

/**
 * The default data set (CONTRACT §7): the ip-location-db ASN and country packages,
 * pinned in package.json, read from node_modules.
 */
export function defaultSources(): SourceSpec[] {
  const asn = packageDir("@ip-location-db/asn");
  const country = packageDir("@ip-location-db/geo-whois-asn-country");
  return [
    {
      name: "ASN (RouteViews, NRO, DB-IP)",
      package: "@ip-location-db/asn",
      version: versionOf(asn),
      license: "CC BY 4.0",
      attribution:
        "IP to ASN data by RouteViews (routeviews.org), the Number Resource Organization (nro.net) and DB-IP (IP Geolocation by DB-IP, db-ip.com), licensed under CC BY 4.0 (creativecommons.org/licenses/by/4.0/); merged by ip-location-db",
      url: "https://github.com/sapics/ip-location-db",
      kind: "asn",
      files: { 4: join(asn, "asn-ipv4-num.csv"), 6: join(asn, "asn-ipv6-num.csv") },
    },
    {
      name: "Country (geo-whois-asn-country)",
      package: "@ip-location-db/geo-whois-asn-country",
      version: versionOf(country),
      license: "CC0",
      attribution: "Country data from ip-location-db geo-whois-asn-country (GeoFeed, whois and ASN data), dedicated to the public domain under CC0",
      url: "https://github.com/sapics/ip-location-db",
      kind: "country",
      files: { 4: join(country, "geo-whois-asn-country-ipv4-num.csv"), 6: join(country, "geo-whois-asn-country-ipv6-num.csv") },
    },
  ];
}

function packageDir(name: string): string {
  return dirname(Bun.resolveSync(`${name}/package.json`, import.meta.dir));
}

function versionOf(directory: string): string {
  return (JSON.parse(readFileSync(join(directory, "package.json"), "utf8")) as { version: string }).version;
}

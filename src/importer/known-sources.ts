/**
 * Licences and attribution of data sets iplookup recognises, so `data info` can show
 * them without the operator typing them in. Matched by npm package name (a package.json
 * beside the file) or by the MMDB's database type. Anything else: the operator says
 * (`--license`, `--attribution`), or `data info` shows the licence as not stated.
 */
interface KnownSource {
  readonly license: string;
  readonly attribution: string;
  readonly url: string;
}

const IP_LOCATION_DB = "https://github.com/sapics/ip-location-db";

const DBIP: KnownSource = {
  license: "CC BY 4.0",
  attribution: "IP Geolocation by DB-IP (db-ip.com), licensed under CC BY 4.0 (creativecommons.org/licenses/by/4.0/)",
  url: "https://db-ip.com/db/lite.php",
};

const GEOLITE2: KnownSource = {
  license: "GeoLite2 End User License Agreement",
  attribution: "This product includes GeoLite2 data created by MaxMind, available from https://www.maxmind.com",
  url: "https://www.maxmind.com/en/geolite2/eula",
};

export const ASN_PACKAGE: KnownSource = {
  license: "CC BY 4.0",
  attribution:
    "IP to ASN data by RouteViews (routeviews.org), the Number Resource Organization (nro.net) and DB-IP (IP Geolocation by DB-IP, db-ip.com), licensed under CC BY 4.0 (creativecommons.org/licenses/by/4.0/); merged by ip-location-db",
  url: IP_LOCATION_DB,
};

export const GEO_WHOIS_ASN_COUNTRY_PACKAGE: KnownSource = {
  license: "CC0",
  // The package declares CC0; it also carries the NRO's notice (NRO_LICENSE) for the
  // registries' statistics in it, which asks for attribution to nro.net: given here.
  attribution:
    "Country data from ip-location-db geo-whois-asn-country (GeoFeed, whois and ASN data), dedicated to the public domain under CC0; its registry statistics by the Number Resource Organization (nro.net)",
  url: IP_LOCATION_DB,
};

const BY_PACKAGE: ReadonlyArray<[RegExp, KnownSource]> = [
  [/^@ip-location-db\/asn(-mmdb)?$/, ASN_PACKAGE],
  [/^@ip-location-db\/geo-whois-asn-country(-mmdb)?$/, GEO_WHOIS_ASN_COUNTRY_PACKAGE],
  [/^@ip-location-db\/dbip-/, { ...DBIP, attribution: `${DBIP.attribution}; repackaged by ip-location-db`, url: IP_LOCATION_DB }],
  [/^@ip-location-db\/geolite2-/, { ...GEOLITE2, attribution: `${GEOLITE2.attribution}; repackaged by ip-location-db` }],
];

/**
 * The cloud providers' own feeds (feeds/), by the name the feed reader gives them. None
 * of them states a licence; each publisher says what it publishes the file for.
 */
const NO_LICENCE = "none stated by the publisher";
const FEEDS: ReadonlyArray<[RegExp, KnownSource]> = [
  [/^AWS IP address ranges$/, { license: NO_LICENCE, attribution: "IP address ranges published by Amazon Web Services (ip-ranges.json)", url: "https://docs.aws.amazon.com/vpc/latest/userguide/aws-ip-ranges.html" }],
  [/^Google Cloud IP address ranges$/, { license: NO_LICENCE, attribution: "IP address ranges published by Google Cloud (cloud.json)", url: "https://www.gstatic.com/ipranges/cloud.json" }],
  [/^Azure IP ranges and service tags$/, { license: NO_LICENCE, attribution: "Azure IP Ranges and Service Tags published by Microsoft", url: "https://www.microsoft.com/en-us/download/details.aspx?id=56519" }],
  [/^Oracle Cloud IP address ranges$/, { license: NO_LICENCE, attribution: "IP address ranges published by Oracle Cloud Infrastructure (public_ip_ranges.json)", url: "https://docs.oracle.com/en-us/iaas/tools/public_ip_ranges.json" }],
];

const BY_DATABASE_TYPE: ReadonlyArray<[RegExp, KnownSource]> = [
  ...FEEDS,
  [/^GeoLite2-/, GEOLITE2],
  [/^DBIP-.*-Lite\b/i, DBIP],
  [/ipinfo/i, { license: "CC BY-SA 4.0", attribution: "IP address data powered by IPinfo (ipinfo.io)", url: "https://ipinfo.io/lite" }],
];

export function knownByPackage(name: string): KnownSource | undefined {
  return BY_PACKAGE.find(([pattern]) => pattern.test(name))?.[1];
}

export function knownByDatabaseType(type: string): KnownSource | undefined {
  return BY_DATABASE_TYPE.find(([pattern]) => pattern.test(type))?.[1];
}

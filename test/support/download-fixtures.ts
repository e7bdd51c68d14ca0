import { gzipSync } from "bun";
import { zipSync } from "fflate";
import { uint32, writeMmdb } from "./mmdb-writer.ts";

/**
 * Small files laid out as publishers ship them, for tests of downloads and updates:
 * MaxMind's GeoLite2 `.tar.gz` (a dated folder with the .mmdb, COPYRIGHT.txt and
 * LICENSE.txt) with its `.sha256` ("HEX  NAME"), DB-IP's lite `.mmdb.gz`, iptoasn's
 * `.tsv.gz`, and a zip.
 */

/** A GeoLite2-ASN MMDB: 1.0.0.0/24 is AS `asn`, 2606:4700::/32 AS 13335. */
export function geoLite2AsnMmdb(asn = 13335, name = "CLOUDFLARENET"): Uint8Array {
  return writeMmdb({
    ipVersion: 6,
    databaseType: "GeoLite2-ASN",
    buildEpoch: Date.UTC(2026, 10, 20) / 1000,
    networks: [
      { network: "1.0.0.0/24", value: { autonomous_system_number: uint32(asn), autonomous_system_organization: name } },
      { network: "2606:4700::/32", value: { autonomous_system_number: uint32(13335), autonomous_system_organization: "CLOUDFLARENET" } },
    ],
  }).bytes;
}

/** A DB-IP lite country MMDB: 1.0.0.0/24 and 8.8.8.0/24 in `country`. */
export function dbipCountryMmdb(country = "AU"): Uint8Array {
  return writeMmdb({
    ipVersion: 6,
    databaseType: "DBIP-Country-Lite",
    buildEpoch: Date.UTC(2026, 10, 1) / 1000,
    networks: [
      { network: "1.0.0.0/24", value: { country: { iso_code: country, names: { en: country } } } },
      { network: "8.8.8.0/24", value: { country: { iso_code: "US", names: { en: "United States" } } } },
    ],
  }).bytes;
}

/** An IPinfo lite MMDB (flat records: `asn` as "AS13335", `as_name`, `country_code`). */
export function ipinfoLiteMmdb(asn = 13335): Uint8Array {
  return writeMmdb({
    ipVersion: 6,
    databaseType: "ipinfo lite.mmdb",
    networks: [{ network: "1.0.0.0/24", value: { asn: `AS${asn}`, as_name: "Cloudflare, Inc.", country_code: "AU", continent_code: "OC" } }],
  }).bytes;
}

/** MaxMind's download: `EDITION_DATE/` holding COPYRIGHT.txt, LICENSE.txt and EDITION.mmdb, tar'd and gzipped. */
export async function maxmindTarGz(edition: string, date: string, mmdb: Uint8Array): Promise<Uint8Array> {
  const folder = `${edition}_${date}`;
  return new Bun.Archive(
    {
      [`${folder}/COPYRIGHT.txt`]: "Database and Contents Copyright (c) 2026 MaxMind, Inc.\n",
      [`${folder}/LICENSE.txt`]: "Use of this MaxMind product is governed by MaxMind's GeoLite2 End User License Agreement.\n",
      [`${folder}/${edition}.mmdb`]: mmdb,
    },
    { compress: "gzip" },
  ).bytes();
}

/** MaxMind's `.sha256` beside a download: "HEX  NAME". */
export function sha256File(bytes: Uint8Array, name: string): string {
  return `${sha256(bytes)}  ${name}\n`;
}

export function sha256(bytes: Uint8Array): string {
  return new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
}

export function gzip(bytes: Uint8Array | string): Uint8Array {
  return gzipSync(typeof bytes === "string" ? new TextEncoder().encode(bytes) : new Uint8Array(bytes));
}

export function zip(files: Record<string, Uint8Array | string>): Uint8Array {
  return zipSync(Object.fromEntries(Object.entries(files).map(([name, body]) => [name, typeof body === "string" ? new TextEncoder().encode(body) : body])));
}

/** iptoasn's ip2asn-combined.tsv: 1.0.0.0/24 AS `asn`, a "Not routed" row, an IPv6 row. */
export function iptoasnTsv(asn = 13335): string {
  return [
    `1.0.0.0\t1.0.0.255\t${asn}\tUS\tCLOUDFLARENET`,
    "1.0.1.0\t1.0.3.255\t0\tNone\tNot routed",
    "8.8.8.0\t8.8.8.255\t15169\tUS\tGOOGLE",
    "2606:4700::\t2606:4700:ffff:ffff:ffff:ffff:ffff:ffff\t13335\tUS\tCLOUDFLARENET",
  ].join("\n");
}

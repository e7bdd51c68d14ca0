import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { SourceSpec } from "../../src/importer/source.ts";

/**
 * A small data set in the ip-location-db numeric layouts, written into `dir`: two ASN
 * rows in 1.0.0.0/24 (one nested), a country layer with a nested block, and IPv6.
 */
export function writeSmallSources(dir: string, files: Partial<Record<string, string>> = {}): SourceSpec[] {
  const contents: Record<string, string> = {
    "asn-4.csv": [
      "16777216,16777471,13335,\"Cloudflare, Inc.\"", // 1.0.0.0/24
      "16777344,16777359,64500,Example \"Nested\" Net", // 1.0.0.128/28, later: wins
      "134744064,134744319,15169,Google LLC", // 8.8.8.0/24
    ].join("\n"),
    "asn-6.csv": ["50543257694033307102031451402929180945,50543257694033307102031451402929180945,13335,\"Cloudflare, Inc.\""].join("\n"), // 2606:4700:4700::1111; the country row is ::1100-::11ff
    "country-4.csv": ["16777216,16777471,AU", "134742016,134750207,US"].join("\n"), // 1.0.0.0/24, 8.8.0.0/19
    "country-6.csv": ["50543257694033307102031451402929180928,50543257694033307102031451402929181183,US"].join("\n"),
    ...files,
  };
  for (const [name, text] of Object.entries(contents)) writeFileSync(join(dir, name), text ?? "");
  const common = { version: "1.0.0", url: "https://example.test/data", attribution: "test data" };
  const pair = (prefix: string, format: "asn-csv" | "country-csv") => [
    { path: join(dir, `${prefix}-4.csv`), format, family: 4 as const },
    { path: join(dir, `${prefix}-6.csv`), format, family: 6 as const },
  ];
  return [
    { files: pair("asn", "asn-csv"), describe: { ...common, name: "asn", origin: "test-asn", license: "CC BY 4.0" } },
    { files: pair("country", "country-csv"), describe: { ...common, name: "country", origin: "test-country", license: "CC0" } },
  ];
}

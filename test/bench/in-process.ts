import { readFileSync } from "node:fs";
import { Reader } from "mmdb-lib";
import { parseAddress } from "../../src/address/parse.ts";
import { defaultDataPath } from "../../src/config/paths.ts";
import { RangeIndex } from "../../src/index/range-index.ts";
import { benchAddresses } from "./addresses.ts";

export interface InProcessFigures {
  family: 4 | 6;
  iplookupParseAndLookupNs: number;
  iplookupLookupNs: number;
  mmdbLibNs: number;
  ratio: number;
}

/** Nanoseconds per call of `work` over `items`, best of `rounds` (after a warm-up). */
function nsPer<T>(items: readonly T[], work: (item: T) => unknown, rounds = 7): number {
  let sink = 0;
  for (const item of items) if (work(item)) sink++;
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < rounds; round++) {
    const began = Bun.nanoseconds();
    for (const item of items) if (work(item)) sink++;
    best = Math.min(best, (Bun.nanoseconds() - began) / items.length);
  }
  if (sink < 0) console.log(sink);
  return best;
}

/**
 * In-process lookups on the full default data, beside mmdb-lib reading the same data
 * set's MMDB build (@ip-location-db/geo-whois-asn-country-mmdb, the same version). Both
 * take the address as text, as a request brings it; iplookup's figure also without the
 * parse. iplookup answers ASN and country and computes `network`; the MMDB holds country.
 */
export function measureInProcess(): InProcessFigures[] {
  const index = RangeIndex.open(defaultDataPath());
  const mmdbPath = Bun.resolveSync("@ip-location-db/geo-whois-asn-country-mmdb/geo-whois-asn-country.mmdb", import.meta.dir);
  const reader = new Reader(readFileSync(mmdbPath));
  return ([4, 6] as const).map((family) => {
    const texts = benchAddresses(family, 100_000, family);
    const parsed = texts.map((text) => parseAddress(text)!);
    const iplookupParseAndLookupNs = nsPer(texts, (text) => index.lookup(parseAddress(text)!));
    const iplookupLookupNs = nsPer(parsed, (address) => index.lookup(address));
    const mmdbLibNs = nsPer(texts, (text) => reader.get(text));
    return { family, iplookupParseAndLookupNs, iplookupLookupNs, mmdbLibNs, ratio: iplookupParseAndLookupNs / mmdbLibNs };
  });
}

if (import.meta.main) console.log(measureInProcess());

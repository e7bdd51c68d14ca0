import { readFileSync } from "node:fs";
import { Reader } from "mmdb-lib";
import { parseAddress } from "../../src/address/parse.ts";
import { defaultDataPath } from "../../src/config/paths.ts";
import { RangeIndex } from "../../src/index/range-index.ts";
import { benchAddresses } from "./addresses.ts";
import { pairedRatio } from "./paired.ts";

export interface InProcessFigures {
  family: 4 | 6;
  iplookupParseAndLookupNs: number;
  iplookupLookupNs: number;
  mmdbLibNs: number;
  /** iplookup's time (parse + lookup) over mmdb-lib's: the median of the rounds' ratios. */
  ratio: number;
  ratioRange: [number, number];
}

/** A loop over one list of inputs, timed as a whole; it returns a count so the work is not optimised away. */
type Pass = () => number;

/**
 * Times each pass over `items` inputs in `rounds` rounds (after a warm-up round), the
 * passes taking turns within a round, their order reversed every other round. A shared
 * machine's speed drifts by tens of per cent within a minute; run side by side, the
 * passes of one round meet the same machine, so their ratio holds where each one's
 * time does not. Returns nanoseconds per input for every pass in every round.
 */
export function roundsOf(passes: readonly Pass[], items: number, rounds = 9): number[][] {
  // What building the inputs (and loading the data) left is collected first, as serve
  // collects it before it listens: measured while that garbage was still being swept,
  // the first library timed lost a quarter of its speed (IPv4: ~210 ns, ~160 after).
  Bun.gc(true);
  let sink = 0;
  for (const pass of passes) sink += pass();
  const times = passes.map((): number[] => []);
  for (let round = 0; round < rounds; round++) {
    const order = passes.map((_, i) => (round % 2 === 0 ? i : passes.length - 1 - i));
    for (const i of order) {
      const began = Bun.nanoseconds();
      sink += (passes[i] as Pass)();
      (times[i] as number[]).push((Bun.nanoseconds() - began) / items);
    }
  }
  if (sink < 0) console.log(sink);
  return times;
}

/**
 * In-process lookups on the full default data, beside mmdb-lib reading the same data
 * set's MMDB build (@ip-location-db/geo-whois-asn-country-mmdb, the same version). Both
 * take the address as text, as a request brings it; iplookup's figure also without the
 * parse. iplookup answers ASN and country and computes `network`; the MMDB holds country.
 * Times are each pass's best round; the ratio pairs the two libraries round by round.
 */
export function measureInProcess(): InProcessFigures[] {
  const index = RangeIndex.open(defaultDataPath());
  const mmdbPath = Bun.resolveSync("@ip-location-db/geo-whois-asn-country-mmdb/geo-whois-asn-country.mmdb", import.meta.dir);
  const reader = new Reader(readFileSync(mmdbPath));
  return ([4, 6] as const).map((family) => {
    const texts = benchAddresses(family, 100_000, family);
    const parsed = texts.map((text) => parseAddress(text)!);
    const counted = <T>(items: readonly T[], work: (item: T) => unknown): Pass => () => {
      let found = 0;
      for (const item of items) if (work(item)) found++;
      return found;
    };
    const [withParse, lookupOnly, mmdbLib] = roundsOf(
      [
        counted(texts, (text) => index.lookup(parseAddress(text)!)),
        counted(parsed, (address) => index.lookup(address)),
        counted(texts, (text) => reader.get(text)),
      ],
      texts.length,
    ) as [number[], number[], number[]];
    return {
      family,
      iplookupParseAndLookupNs: Math.min(...withParse),
      iplookupLookupNs: Math.min(...lookupOnly),
      mmdbLibNs: Math.min(...mmdbLib),
      ...pairedRatio(withParse, mmdbLib),
    };
  });
}

if (import.meta.main) console.log(measureInProcess());

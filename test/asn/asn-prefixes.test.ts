import { beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { classifyAddress } from "../../src/address/classify.ts";
import { parseAddress } from "../../src/address/parse.ts";
import { classifyAsn } from "../../src/asn/asn-number.ts";
import { asnIndexOf, type AsnIndex } from "../../src/asn/asn-index.ts";
import type { RangeIndex } from "../../src/index/range-index.ts";
import { defaultIndex } from "../support/default-data.ts";
import { cidrCover, flattenedSources, majorityCountry, text, type Flattened, type Run } from "./asn-oracle.ts";

/**
 * The AS answers against the source CSVs: prefixes, prefixes6, num_ips and the majority
 * country of ASes of every size, computed by the oracle (asn-oracle.ts) from the
 * ip-location-db files the default data is built from, and lookups just inside and just
 * outside each prefix.
 */

let index: RangeIndex;
let asns: AsnIndex;
let sources: Flattened;
/** The oracle's runs per AS number and family. */
const oracleRuns = { 4: new Map<number, Run[]>(), 6: new Map<number, Run[]>() };

beforeAll(() => {
  index = defaultIndex();
  asns = asnIndexOf(index);
  sources = flattenedSources();
  for (const family of [4, 6] as const) {
    for (const run of sources.asn[family]) {
      const asn = Number(run.value);
      const list = oracleRuns[family].get(asn) ?? [];
      list.push(run);
      oracleRuns[family].set(asn, list);
    }
  }
});

const runs = (asn: number, family: 4 | 6) => oracleRuns[family].get(asn) ?? [];

/** The AS number a lookup of `value` answers, or null (none, or an address lookups refuse as not public). */
function lookupAsn(value: bigint, bits: 32 | 128): number | null {
  const address = parseAddress(text(value, bits));
  if (!address) throw new Error(`cannot parse ${text(value, bits)}`);
  if (classifyAddress(address) !== null) return null;
  return index.lookup(address)?.record.asn ?? null;
}

/** [first, last] of a CIDR text. */
function bounds(cidr: string): [bigint, bigint, 32 | 128] {
  const [network, length] = cidr.split("/") as [string, string];
  const bits = network.includes(":") ? 128 : 32;
  const address = parseAddress(network);
  if (!address) throw new Error(`bad prefix ${cidr}`);
  const first = address.version === 4 ? BigInt(address.value) : address.words.reduce((sum, word) => (sum << 32n) | BigInt(word), 0n);
  return [first, first + (1n << BigInt(bits - Number(length))) - 1n, bits];
}

function checkAgainstSources(asn: number): void {
  const result = asns.result(asn);
  const v4 = runs(asn, 4);
  const v6 = runs(asn, 6);
  expect({ asn, found: result.found }).toEqual({ asn, found: v4.length + v6.length > 0 });
  expect({ asn, prefixes: result.prefixes }).toEqual({ asn, prefixes: cidrCover(v4, 32) });
  expect({ asn, prefixes6: result.prefixes6 }).toEqual({ asn, prefixes6: cidrCover(v6, 128) });
  expect({ asn, num_ips: result.num_ips }).toEqual({ asn, num_ips: Number(v4.reduce((sum, run) => sum + run.last - run.first + 1n, 0n)) });
  expect({ asn, country: result.country_code }).toEqual({ asn, country: majorityCountry(v4, v6, sources.country) });
}

/** Lookups at both ends of each prefix (the first `limit` of each family), and one address outside each end. */
function checkEdges(asn: number, result: { prefixes: readonly string[]; prefixes6: readonly string[] }, limit = Infinity): void {
  const blocks = [...result.prefixes, ...result.prefixes6].map(bounds);
  const covered = (value: bigint, bits: number) => blocks.some(([first, last, family]) => family === bits && value >= first && value <= last);
  for (const [first, last, bits] of [...result.prefixes.slice(0, limit), ...result.prefixes6.slice(0, limit)].map(bounds)) {
    expect({ at: text(first, bits), asn: lookupAsn(first, bits) }).toEqual({ at: text(first, bits), asn });
    expect({ at: text(last, bits), asn: lookupAsn(last, bits) }).toEqual({ at: text(last, bits), asn });
    // Just outside: this AS only where another of its prefixes begins (blocks touch).
    const max = (1n << BigInt(bits)) - 1n;
    for (const outside of [first - 1n, last + 1n]) {
      if (outside < 0n || outside > max) continue;
      const answered = lookupAsn(outside, bits);
      expect({ at: text(outside, bits), ours: answered === asn }).toEqual({ at: text(outside, bits), ours: covered(outside, bits) });
    }
  }
}

describe("ASes of every size against the source CSVs", () => {
  // 112: two prefixes a family; 2500: a few dozen; 15169: a hundred and more;
  // 13335: thousands of segments (countries change within its blocks); 4134: the most
  // prefixes of the default data; 749: the most addresses.
  for (const asn of [112, 2500, 15169, 13335, 4134, 749]) {
    test(`AS${asn}: prefixes, prefixes6, num_ips, country; lookups at and just past every edge`, () => {
      checkAgainstSources(asn);
      const result = asns.result(asn);
      expect(result.prefixes.length + result.prefixes6.length).toBeGreaterThan(0);
      checkEdges(asn, result);
      expect(new TextDecoder().decode(asns.resultJson(asn))).toBe(JSON.stringify(result));
      // The name is the one lookups answer.
      const [first, , bits] = bounds((result.prefixes[0] ?? result.prefixes6[0]) as string);
      const address = parseAddress(text(first, bits));
      expect(result.name).toBe(index.lookup(address!)!.record.as_name);
    });
  }

  test("AS6939: blocks lookups refuse (Teredo's 2001::/32, 6a44's 192.88.99.2) are in none of its prefixes, nor in num_ips; its addresses around them are", () => {
    checkAgainstSources(6939);
    const result = asns.result(6939);
    checkEdges(6939, result);
    const holds = (value: bigint, bits: 32 | 128) =>
      [...result.prefixes, ...result.prefixes6].map(bounds).some(([first, last, size]) => size === bits && value >= first && value <= last);
    const at = (text: string) => {
      const address = parseAddress(text)!;
      return address.version === 4 ? BigInt(address.value) : address.words.reduce((sum, word) => (sum << 32n) | BigInt(word), 0n);
    };
    expect(holds(at("192.88.99.2"), 32)).toBe(false);
    expect(holds(at("2001::1"), 128)).toBe(false);
    expect(holds(at("2001:0:ffff:ffff:ffff:ffff:ffff:ffff"), 128)).toBe(false);
    for (const text of ["192.88.99.1", "192.88.99.3"]) {
      expect({ text, asn: lookupAsn(at(text), 32), held: holds(at(text), 32) }).toEqual({ text, asn: 6939, held: true });
    }
  });

  test("AS4134 has the most prefixes and AS749 the most IPv4 addresses of the default data (the bench relies on it)", () => {
    let most = 0;
    let widest = 0;
    for (let slot = 0; slot < asns.size; slot++) {
      if ((asns.image.v4Addresses[slot] as number) > (asns.image.v4Addresses[widest] as number)) widest = slot;
      const count = asns.prefixes4(slot).length + asns.prefixes6(slot).length;
      if (count > most) most = count;
    }
    expect(asns.image.asns[widest]).toBe(749);
    const chinanet = asns.result(4134);
    expect(chinanet.prefixes.length + chinanet.prefixes6.length).toBe(most);
  });

  test("an AS the data does not know: found false, nothing else", () => {
    expect(new TextDecoder().decode(asns.resultJson(4199999999))).toBe(JSON.stringify(asns.result(4199999999)));
    expect(asns.result(4199999999)).toEqual({ asn: 4199999999, found: false, name: null, country_code: null, country: null, hosting: null, num_ips: 0, prefixes: [], prefixes6: [] });
  });
});

describe("properties over random ASes of the default data", () => {
  test("every AS's prefixes equal the oracle's, and their edges look up as they should", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: asns.size - 1 }), (slot) => {
        const asn = asns.image.asns[slot] as number;
        checkAgainstSources(asn);
        const result = asns.result(asn);
        // Edges of up to 20 prefixes a family keep each run short.
        checkEdges(asn, result, 20);
        // The bytes the API sends are the result's JSON.
        expect(new TextDecoder().decode(asns.resultJson(asn))).toBe(JSON.stringify(result));
      }),
      { numRuns: 150 },
    );
  });

  test("an address looked up lies in a prefix of its AS, and only of its AS", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffffffff }), (value) => {
        const found = lookupAsn(BigInt(value), 32);
        if (found === null) return;
        const slot = asns.slotOf(found);
        expect(slot).toBeGreaterThanOrEqual(0);
        const inside = asns.prefixes4(slot).some((cidr) => {
          const [first, last] = bounds(cidr);
          return BigInt(value) >= first && BigInt(value) <= last;
        });
        expect({ value, found, inside }).toEqual({ value, found, inside: true });
      }),
      { numRuns: 300 },
    );
  });

  test("a search finds every AS by its number and by its name, ordered by addresses", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: asns.size - 1 }), (slot) => {
        const summary = asns.summary(slot);
        if (classifyAsn(summary.asn) !== null) return;
        const byNumber = asns.search(`AS${summary.asn}`);
        // Numbers starting with it that hold more addresses may push it past 50; its own number never.
        expect(byNumber.length).toBeLessThanOrEqual(50);
        if (byNumber.length < 50) expect(byNumber.map((entry) => entry.asn)).toContain(summary.asn);
        for (const entry of byNumber) expect(String(entry.asn).startsWith(String(summary.asn))).toBe(true);
        for (let i = 1; i < byNumber.length; i++) expect((byNumber[i - 1] as { num_ips: number }).num_ips).toBeGreaterThanOrEqual((byNumber[i] as { num_ips: number }).num_ips);
        if (summary.name) {
          const part = summary.name.slice(0, 12).toUpperCase();
          const byName = asns.search(part);
          // A name that reads as a number ("AS39404" is AS39404's own) also finds the numbers starting with it.
          const digits = /^(?:AS)?([0-9]{1,10})$/.exec(part)?.[1];
          for (const entry of byName) {
            const matches = (entry.name ?? "").toLowerCase().includes(part.toLowerCase()) || (digits !== undefined && String(entry.asn).startsWith(digits));
            expect({ entry, matches }).toEqual({ entry, matches: true });
          }
          const last = byName[byName.length - 1];
          if (byName.length < 50 || (last && last.num_ips < summary.num_ips)) expect(byName.map((entry) => entry.asn)).toContain(summary.asn);
        }
      }),
      { numRuns: 150 },
    );
  });

  test("a search answers exactly what a walk over every AS answers: the matches by name or number, not special-purpose, in order, the first 50", () => {
    const { asns: numbers, v4Addresses, v6Addresses } = asns.image;
    const all = Array.from({ length: asns.size }, (_, slot) => {
      const summary = asns.summary(slot);
      return { slot, summary, lowered: summary.name?.toLowerCase().replaceAll("\n", " ") ?? null, special: classifyAsn(summary.asn) !== null };
    });
    all.sort(
      (a, b) =>
        (v4Addresses[b.slot] as number) - (v4Addresses[a.slot] as number) ||
        (v6Addresses[b.slot] as number) - (v6Addresses[a.slot] as number) ||
        (numbers[a.slot] as number) - (numbers[b.slot] as number),
    );
    const walk = (text: string) => {
      const lowered = text.toLowerCase();
      const digits = /^(?:[Aa][Ss])?([0-9]{1,10})$/.exec(text)?.[1];
      const byNumber = (asn: number) => digits !== undefined && (digits.startsWith("0") ? digits === "0" && asn === 0 : String(asn).startsWith(digits));
      const names = lowered !== "" && !lowered.includes("\n");
      const found = [];
      for (const entry of all) {
        if (entry.special || !((names && entry.lowered?.includes(lowered)) || byNumber(entry.summary.asn))) continue;
        found.push(entry.summary);
        if (found.length === 50) break;
      }
      return found;
    };
    const texts = ["a", "e", "net", "NET", "co", "1", "2", "0", "00", "AS1", "as13", "64", "4200", "cloudflare", "google llc", "é", "ü", "-", ".", " ", "zzzzqqqq", "telecom", "8", "42"];
    for (const text of texts) expect({ text, results: asns.search(text) }).toEqual({ text, results: walk(text) });
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(..."aeinorst .-0123456789AS"), minLength: 1, maxLength: 4 }), (text) => {
        expect({ text, results: asns.search(text) }).toEqual({ text, results: walk(text) });
      }),
      { numRuns: 100 },
    );
  });
});

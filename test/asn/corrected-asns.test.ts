import { beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { publicParts } from "../../src/address/classify.ts";
import { parseAddress } from "../../src/address/parse.ts";
import { asnIndexOf, type AsnIndex } from "../../src/asn/asn-index.ts";
import type { AsnResult } from "../../src/asn/asn-json.ts";
import { AsnService } from "../../src/asn/asn-service.ts";
import { CorrectedAsns } from "../../src/asn/corrected-asns.ts";
import type { Correction, CorrectionFields } from "../../src/corrections/correction.ts";
import { parseCorrectionBlock } from "../../src/corrections/correction-rules.ts";
import { CorrectionTable } from "../../src/corrections/correction-table.ts";
import { buildDataSet } from "../../src/importer/build.ts";
import { writeDataFile } from "../../src/importer/data-file.ts";
import { RangeIndex } from "../../src/index/range-index.ts";
import { LookupService } from "../../src/lookup/lookup-service.ts";
import { defaultIndex } from "../support/default-data.ts";
import { writeSmallSources } from "../support/small-dataset.ts";
import { cidrCover, text } from "./asn-oracle.ts";

/**
 * The AS answers with local corrections over them (CONTRACT §14 with §15): an AS's
 * prefixes cover exactly the addresses whose lookup, corrections applied, answers its
 * number. Checked against an oracle that works from the data's own answers and the
 * corrections' blocks by brute force, and against lookups at every edge.
 */

let index: RangeIndex;
let asns: AsnIndex;

beforeAll(() => {
  index = defaultIndex();
  asns = asnIndexOf(index);
});

function correction(cidr: string, fields: CorrectionFields): Correction {
  return { cidr, fields, note: null, createdAt: "2026-11-05T10:00:00.000Z", updatedAt: "2026-11-05T10:00:00.000Z" };
}

function correctedBy(...corrections: Correction[]): { corrected: CorrectedAsns; table: CorrectionTable } {
  const table = CorrectionTable.build(corrections);
  const corrected = CorrectedAsns.over(asns, table);
  if (corrected === null) throw new Error("no correction names an AS field");
  return { corrected, table };
}

type Span = { first: bigint; last: bigint };

/** [first, last, bits] of a CIDR text. */
function bounds(cidr: string): [bigint, bigint, 32 | 128] {
  const block = parseCorrectionBlock(cidr);
  return [block.first, block.last, block.version === 4 ? 32 : 128];
}

/**
 * The oracle: the addresses of `asn` with the corrections over the data, per family, as
 * sorted disjoint spans. The data's part is its own answer for the AS (held to the
 * source CSVs by asn-prefixes.test.ts); each elementary interval between the edges of
 * those prefixes and of the corrections' blocks answers the `asn` of the most specific
 * block naming one, else the data's; spans a correction moves in are cut to public
 * addresses (the data's already are).
 */
function oracle(asn: number, corrections: readonly Correction[]): { 4: Span[]; 6: Span[] } {
  const data = asns.result(asn);
  const out = { 4: [] as Span[], 6: [] as Span[] };
  for (const bits of [32, 128] as const) {
    const family = bits === 32 ? 4 : 6;
    const own = (family === 4 ? data.prefixes : data.prefixes6).map(bounds);
    const blocks = corrections
      .filter((c) => c.fields.asn !== undefined)
      .map((c) => ({ block: parseCorrectionBlock(c.cidr), asn: c.fields.asn as number | null }))
      .filter(({ block }) => block.version === family);
    const edges = new Set<bigint>();
    for (const [first, last] of own) edges.add(first).add(last + 1n);
    for (const { block } of blocks) edges.add(block.first).add(block.last + 1n);
    const sorted = [...edges].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    for (let i = 0; i + 1 < sorted.length; i++) {
      const first = sorted[i] as bigint;
      const last = (sorted[i + 1] as bigint) - 1n;
      const covering = blocks.filter(({ block }) => block.first <= first && block.last >= last).sort((a, b) => b.block.prefix - a.block.prefix)[0];
      const inData = own.some(([from, to]) => from <= first && to >= last);
      const answers = covering !== undefined ? covering.asn === asn : inData;
      if (!answers) continue;
      for (const [from, to] of covering !== undefined ? publicParts(bits, first, last) : [[first, last] as const]) {
        const previous = out[family][out[family].length - 1];
        if (previous && previous.last + 1n === from) previous.last = to;
        else out[family].push({ first: from, last: to });
      }
    }
  }
  return out;
}

/** What a lookup of `value` answers for `asn`, corrections applied (null: refused or no AS). */
function lookupAsn(lookups: LookupService, value: bigint, bits: 32 | 128): number | null {
  try {
    const [result] = lookups.lookup(lookups.resolve([text(value, bits)]));
    return result?.asn ?? null;
  } catch {
    return null; // not a public address: lookups refuse it
  }
}

/** The result against the oracle, and lookups at both ends of each of its runs and just outside. */
function checkCorrected(asn: number, corrections: readonly Correction[], corrected: CorrectedAsns, table: CorrectionTable): AsnResult {
  const result = corrected.result(asn);
  const expected = oracle(asn, corrections);
  expect({ asn, prefixes: result.prefixes }).toEqual({ asn, prefixes: cidrCover(expected[4], 32) });
  expect({ asn, prefixes6: result.prefixes6 }).toEqual({ asn, prefixes6: cidrCover(expected[6], 128) });
  expect({ asn, num_ips: result.num_ips }).toEqual({ asn, num_ips: Number(expected[4].reduce((sum, span) => sum + span.last - span.first + 1n, 0n)) });
  expect({ asn, found: result.found }).toEqual({ asn, found: expected[4].length + expected[6].length > 0 });
  expect(new TextDecoder().decode(corrected.resultJson(asn))).toBe(JSON.stringify(result));
  const lookups = new LookupService(() => index, () => table);
  for (const bits of [32, 128] as const) {
    const max = (1n << BigInt(bits)) - 1n;
    for (const { first, last } of expected[bits === 32 ? 4 : 6]) {
      expect({ at: text(first, bits), asn: lookupAsn(lookups, first, bits) }).toEqual({ at: text(first, bits), asn });
      expect({ at: text(last, bits), asn: lookupAsn(lookups, last, bits) }).toEqual({ at: text(last, bits), asn });
      for (const outside of [first - 1n, last + 1n]) {
        if (outside >= 0n && outside <= max) expect({ at: text(outside, bits), ours: lookupAsn(lookups, outside, bits) === asn }).toEqual({ at: text(outside, bits), ours: false });
      }
    }
  }
  return result;
}

/** A row of a numeric source CSV for a block: its first and last address, then `rest`. */
function row(cidr: string, rest: string): string {
  const block = parseCorrectionBlock(cidr);
  return `${block.first},${block.last},${rest}`;
}

/** Runs `check` on the AS index of a small data set built from these source files (see writeSmallSources). */
async function withSmallIndex(files: Record<string, string>, check: (small: AsnIndex) => void): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "iplookup-small-asn-"));
  try {
    const path = join(dir, "data.db");
    writeDataFile(path, await buildDataSet(writeSmallSources(dir, files), new Date("2026-01-01T00:00:00Z")));
    check(asnIndexOf(RangeIndex.open(path)));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** An AS number the default data does not know (checked), public. */
const UNKNOWN_ASN = 4242420;

describe("a correction naming asn moves its block between ASes", () => {
  test("1.1.1.0/24 to an AS the data does not know: AS13335 loses it, the new AS holds it with the name and country lookups answer", () => {
    expect(asns.slotOf(UNKNOWN_ASN)).toBe(-1);
    const corrections = [correction("1.1.1.0/24", { asn: UNKNOWN_ASN })];
    const { corrected, table } = correctedBy(...corrections);
    const cloudflare = checkCorrected(13335, corrections, corrected, table);
    expect(cloudflare.num_ips).toBe(asns.result(13335).num_ips - 256);
    expect(cloudflare.prefixes).not.toContain("1.1.1.0/24");
    const moved = checkCorrected(UNKNOWN_ASN, corrections, corrected, table);
    const lookup = index.lookup(parseAddress("1.1.1.1")!)!.record;
    expect(moved).toEqual({
      asn: UNKNOWN_ASN,
      found: true,
      name: lookup.as_name,
      country_code: lookup.country_code,
      country: lookup.country,
      hosting: index.hostingOfAsn(UNKNOWN_ASN),
      num_ips: 256,
      prefixes: ["1.1.1.0/24"],
      prefixes6: [],
    });
    // An AS the corrections leave alone answers as the data does, bytes and all.
    expect(corrected.resultJson(15169)).toEqual(asns.resultJson(15169));
  });

  test("a corrected asn leaves the block's privacy signals as the data gave them: the lookup and the AS answer can differ on hosting until privacy is named too (docs/corrections.md)", () => {
    const look = (table: CorrectionTable) => {
      const lookups = new LookupService(() => index, () => table);
      return lookups.lookup(lookups.resolve(["1.1.1.1"]))[0]!;
    };
    expect(index.hostingOfAsn(13335)).toBe(true);
    expect(index.hostingOfAsn(UNKNOWN_ASN)).toBe(false);
    const moved = correctedBy(correction("1.1.1.0/24", { asn: UNKNOWN_ASN }));
    expect(look(moved.table)).toMatchObject({ asn: UNKNOWN_ASN, as_name: "Cloudflare, Inc.", privacy: { hosting: true, service: "Cloudflare" } });
    expect(moved.corrected.result(UNKNOWN_ASN)).toMatchObject({ found: true, name: "Cloudflare, Inc.", hosting: false });
    const named = correctedBy(correction("1.1.1.0/24", { asn: UNKNOWN_ASN, as_name: "Example", privacy: { hosting: false } }));
    expect(look(named.table)).toMatchObject({ asn: UNKNOWN_ASN, as_name: "Example", privacy: { hosting: false, service: null } });
    expect(named.corrected.result(UNKNOWN_ASN)).toMatchObject({ found: true, name: "Example", hosting: false });
  });

  test("asn null takes a whole AS out: found false, in no search", () => {
    const data = asns.result(2500);
    expect(data.found).toBe(true);
    const corrections = [...data.prefixes, ...data.prefixes6].map((cidr) => correction(cidr, { asn: null }));
    const { corrected, table } = correctedBy(...corrections);
    expect(checkCorrected(2500, corrections, corrected, table)).toEqual({ asn: 2500, found: false, name: null, country_code: null, country: null, hosting: null, num_ips: 0, prefixes: [], prefixes6: [] });
    expect(asns.search("2500").map((entry) => entry.asn)).toContain(2500);
    expect(corrected.search("2500").map((entry) => entry.asn)).not.toContain(2500);
  });

  test("a block the data does not cover, and one holding addresses lookups refuse: only the public addresses join the AS", () => {
    // 192.88.99.0/24 holds 192.88.99.2 (6a44-relay-anycast); 2001::/23 is IETF protocol
    // assignments, most of it refused; 198.18.0.0/15 (benchmarking) is refused whole.
    const corrections = [
      correction("192.88.99.0/24", { asn: UNKNOWN_ASN }),
      correction("2001::/23", { asn: UNKNOWN_ASN }),
      correction("198.18.0.0/15", { asn: UNKNOWN_ASN }),
    ];
    const { corrected, table } = correctedBy(...corrections);
    const result = checkCorrected(UNKNOWN_ASN, corrections, corrected, table);
    expect(result.prefixes).toEqual(["192.88.99.0/31", "192.88.99.3/32", "192.88.99.4/30", "192.88.99.8/29", "192.88.99.16/28", "192.88.99.32/27", "192.88.99.64/26", "192.88.99.128/25"]);
    expect(result.num_ips).toBe(255);
    checkCorrected(6939, corrections, corrected, table);
  });

  test("nested blocks: the most specific block naming asn wins, and one naming other fields only leaves the asn alone", () => {
    const corrections = [
      correction("8.0.0.0/8", { asn: UNKNOWN_ASN }),
      correction("8.8.8.0/24", { asn: 15169 }),
      correction("8.8.8.8/32", { country_code: "DE" }),
      correction("8.8.4.0/24", { asn: null }),
    ];
    const { corrected, table } = correctedBy(...corrections);
    for (const asn of [UNKNOWN_ASN, 15169, 3356]) checkCorrected(asn, corrections, corrected, table);
    expect(corrected.result(15169).prefixes).toContain("8.8.8.0/24");
    expect(corrected.result(UNKNOWN_ASN).prefixes).not.toContain("8.8.4.0/24");
  });

  test("random corrections over random blocks: every AS they touch against the oracle", () => {
    // Blocks around a few busy places of the address space, moved between a few ASes.
    const bases = ["1.0.0.0", "8.8.0.0", "104.16.0.0", "2606:4700::", "2001:4860::"];
    const targets = [13335, 15169, UNKNOWN_ASN, null];
    const block = fc.record({ base: fc.constantFrom(...bases), prefix: fc.integer({ min: 0, max: 16 }), offset: fc.nat(), asn: fc.constantFrom(...targets) }).map(({ base, prefix, offset, asn }) => {
      const [first, , bits] = bounds(`${base}/${base.includes(":") ? 32 : 16}`);
      const length = (bits === 32 ? 16 : 32) + prefix;
      const size = 1n << BigInt(bits - length);
      const start = first + (BigInt(offset) % (1n << BigInt(prefix))) * size;
      return correction(`${text(start, bits)}/${length}`, { asn });
    });
    fc.assert(
      fc.property(fc.uniqueArray(block, { minLength: 1, maxLength: 5, selector: (c) => c.cidr }), (corrections) => {
        const { corrected, table } = correctedBy(...corrections);
        for (const asn of corrected.affected) if (asn === 13335 || asn === 15169 || asn === UNKNOWN_ASN) checkCorrected(asn, corrections, corrected, table);
      }),
      { numRuns: 12 },
    );
  });
});

describe("names and countries follow the corrections, by the AS index's majority rule", () => {
  test("a correction that repeats what the data says changes nothing, for ASes of every size", () => {
    for (const asn of [112, 2500, 6939, 15169, 4134, 13335]) {
      const data = asns.result(asn);
      const { corrected } = correctedBy(correction((data.prefixes[0] ?? data.prefixes6[0]) as string, { asn }));
      expect(corrected.affected.has(asn)).toBe(true);
      expect(corrected.result(asn)).toEqual(data);
      expect(corrected.resultJson(asn)).toEqual(asns.resultJson(asn));
    }
  });

  test("as_name and country_code over most of an AS's addresses become its name and country; over a few, they do not", () => {
    const data = asns.result(15169);
    const all = [...data.prefixes, ...data.prefixes6];
    const renamed = correctedBy(...all.map((cidr) => correction(cidr, { as_name: "Renamed", country_code: "DE" }))).corrected.result(15169);
    expect(renamed).toEqual({ ...data, name: "Renamed", country_code: "DE", country: "Germany" });
    const one = correctedBy(correction(data.prefixes[data.prefixes.length - 1] as string, { as_name: "Renamed", country_code: "DE" })).corrected.result(15169);
    expect(one).toEqual(data);
  });

  test("an AS known only from corrections takes the name a correction gives it", () => {
    const { corrected } = correctedBy(correction("203.0.113.0/24", { asn: UNKNOWN_ASN, as_name: "Lab", country_code: "NL" }));
    // 203.0.113.0/24 is TEST-NET-3: refused, so nothing joins.
    expect(corrected.result(UNKNOWN_ASN).found).toBe(false);
    const named = correctedBy(correction("1.1.1.0/24", { asn: UNKNOWN_ASN, as_name: "Lab", country_code: "NL" })).corrected;
    expect(named.result(UNKNOWN_ASN)).toMatchObject({ found: true, name: "Lab", country_code: "NL", country: "Netherlands", num_ips: 256 });
    // Two names on as many addresses: the one that sorts first, as the AS index breaks ties.
    const tied = correctedBy(
      correction("1.1.1.0/24", { asn: UNKNOWN_ASN, as_name: "Beta", country_code: "DE" }),
      correction("1.0.0.0/24", { asn: UNKNOWN_ASN, as_name: "Alpha", country_code: "NL" }),
    ).corrected;
    expect(tied.result(UNKNOWN_ASN)).toMatchObject({ name: "Alpha", country_code: "DE", num_ips: 512 });
  });

  test("an IPv6-only majority is counted exactly: 2^80 + 1 addresses in one country beat 2^80 in another", () => {
    // AS210329 without its IPv4 blocks: IL on 2a06:c5c0:600::/128 and 2a07:3b80::/48, GB on 2a07:3b80:2::/48.
    const data = asns.result(210329);
    const { corrected, table } = correctedBy(...data.prefixes.map((cidr) => correction(cidr, { asn: null })));
    const result = corrected.result(210329);
    expect(result).toMatchObject({ found: true, num_ips: 0, prefixes: [], prefixes6: ["2a06:c5c0:600::/128", "2a07:3b80::/48", "2a07:3b80:2::/48"] });
    const lookups = new LookupService(() => index, () => table);
    const countryAt = (ip: string) => lookups.lookup(lookups.resolve([ip]))[0]?.country_code;
    expect([countryAt("2a06:c5c0:600::"), countryAt("2a07:3b80::1"), countryAt("2a07:3b80:2::1")]).toEqual(["IL", "IL", "GB"]);
    expect(result.country_code).toBe("IL");
  });

  test("the AS index counts an IPv6-only majority exactly too: a data set of 2^80 + 1 addresses in IL and 2^80 in GB answers IL, and a correction that changes nothing keeps it", async () => {
    const blocks = ["2a06:c5c0:600::/128", "2a07:3b80::/48", "2a07:3b80:2::/48"];
    await withSmallIndex(
      {
        "asn-6.csv": blocks.map((cidr) => row(cidr, "200000,Tie Net")).join("\n"),
        "country-6.csv": [row(blocks[0]!, "IL"), row(blocks[1]!, "IL"), row(blocks[2]!, "GB")].join("\n"),
      },
      (small) => {
        expect(small.result(200000)).toMatchObject({ country_code: "IL", prefixes6: blocks });
        const corrected = CorrectedAsns.over(small, CorrectionTable.build([correction("2a07:3b80:2::/48", { asn: 200000 })]));
        expect(corrected?.result(200000)).toEqual(small.result(200000));
      },
    );
  });

  test("a country only a block lookups refuse has (2001:db8::/32) is no AS's country, in the AS index as in the corrected answers", async () => {
    await withSmallIndex(
      { "asn-6.csv": [row("2001:db8::/32", "200000,Doc Net"), row("2a07:3b80::/48", "200000,Doc Net")].join("\n"), "country-6.csv": row("2001:db8::/32", "GB") },
      (small) => {
        expect(small.result(200000)).toMatchObject({ found: true, country_code: null, country: null, prefixes6: ["2a07:3b80::/48"] });
        const corrected = CorrectedAsns.over(small, CorrectionTable.build([correction("2a07:3b80::/48", { asn: 200000 })]));
        expect(corrected?.result(200000)).toEqual(small.result(200000));
      },
    );
  });

  test("IPv6 counts past 2^53 order a search alike with and without a correction that changes nothing", async () => {
    const a = 0x2a073b80n << 96n;
    const b = 0x2a0a0000n << 96n;
    const big = (1n << 54n) + (1n << 30n);
    const rows = [`${a},${a + big - 1n},200000,Tie Net`, ...[10n, 20n, 30n].map((gap) => `${a + big + gap},${a + big + gap},200000,Tie Net`), `${b},${b + (1n << 54n) + (1n << 31n) - 1n},200001,Tie Net`];
    // The other files each hold one row far from these (a file with none is refused as empty).
    const far = { "asn-4.csv": "134744064,134744319,15169,Google LLC", "country-4.csv": "134742016,134750207,US", "country-6.csv": `${1n << 125n},${(1n << 125n) + 255n},US` };
    await withSmallIndex({ ...far, "asn-6.csv": rows.join("\n") }, (small) => {
      const single = (a + big + 10n).toString(16).padStart(32, "0").match(/.{4}/g)!.join(":");
      const corrected = CorrectedAsns.over(small, CorrectionTable.build([correction(`${single}/128`, { asn: 200000 })]));
      expect(corrected?.result(200000)).toEqual(small.result(200000));
      expect(corrected?.search("tie")).toEqual(small.search("tie"));
    });
  });

  test("corrections that name no AS field (city, privacy) leave the AS answers to the data", () => {
    const table = CorrectionTable.build([correction("1.1.1.0/24", { city: "Sydney", privacy: { vpn: true } })]);
    expect(CorrectedAsns.over(asns, table)).toBeNull();
  });
});

describe("search over the corrected answers", () => {
  test("a moved block changes an AS's count and place; an AS known only from corrections is found by name and number", () => {
    const data = asns.result(13335);
    const { corrected } = correctedBy(...data.prefixes.map((cidr) => correction(cidr, { asn: UNKNOWN_ASN, as_name: "Moved Networks" })));
    // AS13335 keeps its IPv6 addresses alone: still found, by its own name, with no IPv4 address.
    expect(corrected.result(13335)).toMatchObject({ found: true, name: data.name, num_ips: 0, prefixes: [], prefixes6: data.prefixes6 });
    expect(corrected.search("cloudflare").find((entry) => entry.asn === 13335)).toEqual({ asn: 13335, name: data.name, country_code: expect.any(String), num_ips: 0 });
    expect(asns.search("cloudflare")[0]?.asn).toBe(13335);
    expect(corrected.search("moved")).toEqual([{ asn: UNKNOWN_ASN, name: "Moved Networks", country_code: data.country_code, num_ips: data.num_ips }]);
    expect(corrected.search(`AS${UNKNOWN_ASN}`)[0]?.asn).toBe(UNKNOWN_ASN);
    // The rest of a search is the data's, in the data's order.
    const google = asns.search("google");
    expect(corrected.search("google")).toEqual(google);
  });

  test("a correction that changes no answer changes no search: ASes of equal counts (AS5405 and AS49895: 3,584 and 2^99) stay in number order", () => {
    const { corrected } = correctedBy(correction("5.183.211.0/24", { asn: 5405 }));
    expect(corrected.result(5405)).toEqual(asns.result(5405));
    const order = asns.search("nter.").map((entry) => entry.asn);
    expect(order.indexOf(5405)).toBe(order.indexOf(49895) - 1);
    expect(corrected.search("nter.")).toEqual(asns.search("nter."));
  });

  test("a search's order counts the corrected addresses", () => {
    // AS16591 (third in the data's order) takes 1.0.0.0/14 from whoever the data gives it
    // to: enough to pass AS15169, too few to change its name.
    const { corrected } = correctedBy(correction("1.0.0.0/14", { asn: 16591 }));
    const before = asns.search("google");
    expect(before.slice(0, 3).map((entry) => entry.asn)).toEqual([396982, 15169, 16591]);
    const after = corrected.search("google");
    expect(after.slice(0, 3).map((entry) => entry.asn)).toEqual([396982, 16591, 15169]);
    expect(after[1]).toEqual({ ...before[2]!, num_ips: before[2]!.num_ips + 262_144 });
    expect(corrected.result(16591).num_ips).toBe(before[2]!.num_ips + 262_144);
    expect(after.map((entry) => entry.asn).sort()).toEqual(before.map((entry) => entry.asn).sort());
  });
});

test("what is put together lasts while the corrections' content does: a table rebuilt with equal corrections (a key or plan changed) reuses it; a changed one does not", () => {
  const corrections = [correction("1.1.1.0/24", { asn: UNKNOWN_ASN })];
  const first = CorrectedAsns.over(asns, CorrectionTable.build(corrections));
  // Notes and times change no answer.
  const again = CorrectedAsns.over(asns, CorrectionTable.build(corrections.map((c) => ({ ...c, note: "ticket 1", updatedAt: "2026-11-06T10:00:00.000Z" }))));
  expect(again).toBe(first);
  const changed = CorrectedAsns.over(asns, CorrectionTable.build([correction("1.1.1.0/24", { asn: 15169 })]));
  expect(changed).not.toBe(first);
  expect(changed?.result(15169).prefixes).toContain("1.1.1.0/24");
});

test("AsnService follows the corrections it is given: a change is answered at once, the answers of no correction are the data's", async () => {
  let table: CorrectionTable | null = null;
  const service = new AsnService(() => index, () => table);
  const decode = async (asn: number) => JSON.parse(new TextDecoder().decode((await service.answer(asn)).body)) as AsnResult;
  const before = await decode(13335);
  expect(before).toEqual(asns.result(13335));
  table = CorrectionTable.build([correction("1.1.1.0/24", { asn: UNKNOWN_ASN })]);
  expect((await decode(13335)).num_ips).toBe(before.num_ips - 256);
  expect((await decode(UNKNOWN_ASN)).prefixes).toEqual(["1.1.1.0/24"]);
  const search = JSON.parse(new TextDecoder().decode((await service.search(String(UNKNOWN_ASN))).body)) as { results: { asn: number }[] };
  expect(search.results.map((entry) => entry.asn)).toEqual([UNKNOWN_ASN]);
  table = null;
  expect(await decode(13335)).toEqual(before);
  expect((await decode(UNKNOWN_ASN)).found).toBe(false);
});

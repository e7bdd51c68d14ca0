import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { KeyCache } from "../../src/access/key-cache.ts";
import { ipv4Text, ipv6Text } from "../../src/address/parse.ts";
import { AsnService } from "../../src/asn/asn-service.ts";
import type { Correction, CorrectionFields } from "../../src/corrections/correction.ts";
import { CorrectionCache } from "../../src/corrections/correction-cache.ts";
import { parseCorrectionBlock, wordsOf } from "../../src/corrections/correction-rules.ts";
import { CorrectionTable } from "../../src/corrections/correction-table.ts";
import { createApp } from "../../src/http/app.ts";
import type { SourceSpec } from "../../src/importer/source.ts";
import { RangeIndex } from "../../src/index/range-index.ts";
import type { LookupResult } from "../../src/lookup/lookup-result.ts";
import { LookupService } from "../../src/lookup/lookup-service.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { dataSet, fixture, fixtureDir } from "../importer/feeds/support.ts";
import { defaultIndex } from "../support/default-data.ts";
import { runCliInProcess } from "../support/in-process-cli.ts";

/**
 * `network` of a corrected answer (CONTRACT §1 with §15): the largest block around the
 * address on which every field of the answer, privacy included, is the same, never
 * crossing a correction's edge. A correction can make neighbouring data segments (and
 * data gaps) answer alike, and the network then spans them: checked on the examples
 * that were split before, and against a brute-force model on random data and random
 * nested corrections, through both of the lookup service's paths.
 */

const dir = fixtureDir("corrected-network");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function correction(cidr: string, fields: CorrectionFields): Correction {
  return { cidr, fields, note: null, createdAt: "2026-11-05T10:00:00.000Z", updatedAt: "2026-11-05T10:00:00.000Z" };
}

/** Lookups over `index` with `corrections` laid over them; each answer from both paths, which must agree byte for byte. */
function lookups(index: RangeIndex, ...corrections: Correction[]) {
  const table = corrections.length === 0 ? null : CorrectionTable.build(corrections);
  const service = new LookupService(() => index, () => table);
  return (ip: string): LookupResult => {
    const addresses = service.resolve([ip]);
    const [result] = service.lookup(addresses);
    expect(new TextDecoder().decode(service.lookupJson(addresses, false).body)).toBe(JSON.stringify(result));
    return result as LookupResult;
  };
}

/** A result without `ip` and `network`: what must be the same across a network. */
function fieldsOf(result: LookupResult): Record<string, unknown> {
  const { ip: _ip, network: _network, ...fields } = result;
  return fields;
}

let files = 0;

/** A data set of text-address CSV rows and signal lists, built as `data import` builds it. */
async function smallData(parts: { asn?: string[]; country?: string[]; lists?: { lines: string[]; signal: "tor" | "hosting"; service?: string }[] }) {
  const sources: SourceSpec[] = [];
  const n = ++files;
  if (parts.asn) sources.push({ files: [{ path: fixture(dir, `asn-${n}.csv`, parts.asn.join("\n")), format: "asn-csv" }] });
  if (parts.country) sources.push({ files: [{ path: fixture(dir, `country-${n}.csv`, parts.country.join("\n")), format: "country-csv" }] });
  (parts.lists ?? []).forEach(({ lines, signal, service }, i) => {
    sources.push({ files: [{ path: fixture(dir, `list-${n}-${i}.txt`, `${lines.join("\n")}\n`), format: "address-list" }], feed: { signal, ...(service !== undefined ? { service } : {}) } });
  });
  return (await dataSet(dir, sources)).index;
}

describe("the examples that were split", () => {
  test("a country corrected over a /22 the data cuts in two /23s of the same AS answers the /22", () => {
    const index = defaultIndex();
    const data = lookups(index);
    expect(data("3.5.124.1").network).toBe("3.5.124.0/23");
    expect(data("3.5.126.1").network).toBe("3.5.126.0/23");
    const look = lookups(index, correction("3.5.124.0/22", { country_code: "FR" }));
    for (const ip of ["3.5.124.0", "3.5.124.1", "3.5.126.1", "3.5.127.255"]) {
      expect(look(ip)).toEqual({ ...data(ip), network: "3.5.124.0/22", country_code: "FR", country: "France" });
    }
    // Outside the block, the data's answers, cut at its edges.
    for (const ip of ["3.5.123.255", "3.5.128.0"]) expect(fieldsOf(look(ip))).toEqual(fieldsOf(data(ip)));
  });

  test("tor set false over a /24 whose Tor list holds one address answers the /24 at every address", async () => {
    const index = await smallData({ asn: ["1.1.0.0,1.1.0.255,64500,Example", "1.1.1.0,1.1.1.255,13335,Cloudflare"], lists: [{ lines: ["1.1.1.1"], signal: "tor" }] });
    const data = lookups(index);
    expect(["1.1.1.1", "1.1.1.2", "1.1.1.4"].map((ip) => data(ip).network)).toEqual(["1.1.1.1/32", "1.1.1.2/31", "1.1.1.4/30"]);
    const look = lookups(index, correction("1.1.1.0/24", { privacy: { tor: false } }));
    const first = look("1.1.1.0");
    expect(first).toMatchObject({ network: "1.1.1.0/24", asn: 13335, privacy: { tor: false } });
    for (let last = 0; last < 256; last++) {
      const result = look(`1.1.1.${last}`);
      expect([result.ip, result.network]).toEqual([`1.1.1.${last}`, "1.1.1.0/24"]);
      expect(fieldsOf(result)).toEqual(fieldsOf(first));
    }
    // Never past the correction's edge, although 1.1.0.0/24 differs only in its AS.
    expect(look("1.1.0.1").network).toBe("1.1.0.0/24");
  });

  test("a neighbour that differs in a field the correction does not name keeps the networks apart", async () => {
    const index = await smallData({ asn: ["1.1.1.0,1.1.1.127,13335,Cloudflare", "1.1.1.128,1.1.1.255,13335,Cloudflare"], country: ["1.1.1.0,1.1.1.127,AU", "1.1.1.128,1.1.1.255,NZ"], lists: [{ lines: ["1.1.1.1"], signal: "tor" }] });
    const look = lookups(index, correction("1.1.1.0/24", { privacy: { tor: false } }));
    expect(look("1.1.1.1").network).toBe("1.1.1.0/25");
    expect(look("1.1.1.200").network).toBe("1.1.1.128/25");
    // Correcting the country as well makes the two halves one.
    const both = lookups(index, correction("1.1.1.0/24", { country_code: "AU", privacy: { tor: false } }));
    expect([both("1.1.1.1").network, both("1.1.1.200").network]).toEqual(["1.1.1.0/24", "1.1.1.0/24"]);
  });

  test("a correction over a gap answers nulls, and so joins a record of nulls beside it that it makes equal", async () => {
    // 9.9.9.9 is in the data only by the Tor list: found, every other field null.
    const index = await smallData({ asn: ["1.1.1.0,1.1.1.255,13335,Cloudflare"], lists: [{ lines: ["9.9.9.9"], signal: "tor" }] });
    const data = lookups(index);
    expect(data("9.9.9.9")).toMatchObject({ found: true, network: "9.9.9.9/32", asn: null });
    expect(data("9.9.9.10")).toMatchObject({ found: false, network: null });
    const look = lookups(index, correction("9.9.9.0/24", { privacy: { tor: false } }));
    for (const ip of ["9.9.9.0", "9.9.9.9", "9.9.9.10", "9.9.9.255"]) {
      expect(look(ip)).toMatchObject({ found: true, network: "9.9.9.0/24", asn: null, as_name: null, privacy: { tor: false } });
    }
    // Not naming tor, the listed address still differs from the gap around it.
    const named = lookups(index, correction("9.9.9.0/24", { asn: 64500 }));
    expect(named("9.9.9.9")).toMatchObject({ found: true, network: "9.9.9.9/32", asn: 64500, privacy: { tor: true } });
    expect(named("9.9.9.10")).toMatchObject({ found: true, network: "9.9.9.10/31", asn: 64500, privacy: { tor: false } });
    expect(named("9.9.9.200")).toMatchObject({ network: "9.9.9.128/25" });
  });

  test("privacy compares as corrected: hosting set false clears both halves' services, so they join; set true keeps them apart", async () => {
    const index = await smallData({
      asn: ["1.1.2.0,1.1.2.255,64500,Example"],
      lists: [
        { lines: ["1.1.2.0/25"], signal: "hosting", service: "Alpha" },
        { lines: ["1.1.2.128/25"], signal: "hosting", service: "Beta" },
      ],
    });
    const data = lookups(index);
    expect([data("1.1.2.1").privacy.service, data("1.1.2.200").privacy.service]).toEqual(["Alpha", "Beta"]);
    const off = lookups(index, correction("1.1.2.0/24", { privacy: { hosting: false } }));
    expect(off("1.1.2.1")).toMatchObject({ network: "1.1.2.0/24", privacy: { hosting: false, service: null } });
    expect(off("1.1.2.200").network).toBe("1.1.2.0/24");
    const on = lookups(index, correction("1.1.2.0/24", { privacy: { hosting: true } }));
    expect(on("1.1.2.1")).toMatchObject({ network: "1.1.2.0/25", privacy: { hosting: true, service: "Alpha" } });
    expect(on("1.1.2.200")).toMatchObject({ network: "1.1.2.128/25", privacy: { service: "Beta" } });
  });

  test("IPv6: a correction joins data segments as in IPv4", async () => {
    const index = await smallData({
      asn: ["2a01:4f8:1::,2a01:4f8:1::ffff,64500,Example", "2a01:4f8:1::1:0,2a01:4f8:1::1:ffff,64501,Example"],
      lists: [{ lines: ["2a01:4f8:1::1:8000/113"], signal: "tor" }],
    });
    const data = lookups(index);
    expect(data("2a01:4f8:1::1").network).toBe("2a01:4f8:1::/112");
    const look = lookups(index, correction("2a01:4f8:1::/111", { asn: 64500, privacy: { tor: true } }));
    for (const ip of ["2a01:4f8:1::", "2a01:4f8:1::1", "2a01:4f8:1::1:1", "2a01:4f8:1::1:ffff"]) {
      expect(look(ip)).toMatchObject({ network: "2a01:4f8:1::/111", asn: 64500, as_name: "Example", privacy: { tor: true } });
    }
  });
});

describe("a correction that makes a large block answer alike", () => {
  // 256 rows of alternating AS, one of them in another country: 255 data segments
  // that one correction of the AS makes three runs, longer than a walk compares before
  // it keeps a run for the answers after it.
  const rows = (row: (k: number) => [string, string]) => {
    const asn: string[] = [];
    const country: string[] = [];
    for (let k = 0; k < 256; k++) {
      const [first, last] = row(k);
      asn.push(`${first},${last},${64500 + (k % 2)},Example`);
      country.push(`${first},${last},${k === 128 ? "NZ" : "AU"}`);
    }
    return { asn, country };
  };

  test("IPv4: every address answers the largest block inside its run, the first answer and the later ones alike", async () => {
    const index = await smallData(rows((k) => [`1.3.${k}.0`, `1.3.${k}.255`]));
    const look = lookups(index, correction("1.3.0.0/16", { asn: 64500 }));
    const expected: [string, string][] = [
      ["1.3.5.1", "1.3.0.0/17"],
      ["1.3.127.255", "1.3.0.0/17"],
      ["1.3.128.1", "1.3.128.0/24"],
      ["1.3.200.1", "1.3.192.0/18"],
      ["1.3.129.5", "1.3.129.0/24"],
      ["1.3.130.1", "1.3.130.0/23"],
      ["1.3.0.0", "1.3.0.0/17"],
      ["1.3.255.255", "1.3.192.0/18"],
    ];
    for (let round = 0; round < 2; round++) {
      for (const [ip, network] of expected) expect({ ip, network: look(ip).network }).toEqual({ ip, network });
    }
    expect(look("1.3.64.1")).toMatchObject({ asn: 64500, country_code: "AU" });
  });

  test("IPv6: the same", async () => {
    const base = 0x2a0104f8000200000000000000000000n; // 2a01:4f8:2::/96
    const at = (k: number, offset: number) => ipv6Text(wordsOf(base + (BigInt(k) << 24n) + BigInt(offset)));
    const index = await smallData(rows((k) => [at(k, 0), at(k, 0xffffff)]));
    const look = lookups(index, correction(`${at(0, 0)}/96`, { asn: 64500 }));
    const expected: [string, string][] = [
      [at(5, 1), `${at(0, 0)}/97`],
      [at(128, 1), `${at(128, 0)}/104`],
      [at(200, 1), `${at(192, 0)}/98`],
      [at(129, 5), `${at(129, 0)}/104`],
      [at(130, 1), `${at(130, 0)}/103`],
      [at(255, 0xffffff), `${at(192, 0)}/98`],
    ];
    for (let round = 0; round < 2; round++) {
      for (const [ip, network] of expected) expect({ ip, network: look(ip).network }).toEqual({ ip, network });
    }
  });
});

describe("what does not change", () => {
  test("AS answers (CONTRACT §14), which do not use the network: a correction naming no AS field leaves them as the data's", async () => {
    const index = defaultIndex();
    const table = CorrectionTable.build([correction("3.5.124.0/22", { country_code: "FR" }), correction("1.1.1.0/24", { privacy: { tor: false } })]);
    const plain = new AsnService(() => index);
    const corrected = new AsnService(() => index, () => table);
    for (const asn of [16509, 13335]) {
      const [before, after] = [await plain.answer(asn), await corrected.answer(asn)].map((answer) => JSON.parse(new TextDecoder().decode(answer.body)));
      expect({ ...after, country_code: null, country: null }).toEqual({ ...before, country_code: null, country: null });
    }
  });

  test("offline `iplookup lookup` and the HTTP answer agree on corrected networks", async () => {
    const n = ++files;
    const { path } = await dataSet(dir, [
      { files: [{ path: fixture(dir, `asn-cli-${n}.csv`, "1.1.0.0,1.1.0.255,64500,Example\n1.1.1.0,1.1.1.255,13335,Cloudflare\n"), format: "asn-csv" }] },
      { files: [{ path: fixture(dir, `tor-cli-${n}.txt`, "1.1.1.1\n9.9.9.9\n"), format: "address-list" }], feed: { signal: "tor" } },
    ]);
    const state = join(dir, `state-${n}.db`);
    for (const args of [["1.1.1.0/24", "--tor", "false"], ["9.9.9.0/25", "--tor", "false", "--asn", "64501"], ["1.1.1.128/26", "--country", "NZ"]]) {
      expect((await runCliInProcess(path, ["corrections", "set", ...args, "--state", state])).code).toBe(0);
    }
    const ips = ["1.1.1.1", "1.1.1.2", "1.1.1.4", "1.1.1.200", "1.1.1.130", "1.1.0.7", "9.9.9.9", "9.9.9.100", "9.9.9.200", "8.8.8.8"];
    const offline = await runCliInProcess(path, ["lookup", "--json", "--data", path, "--state", state, ...ips]);
    expect(offline.code).toBe(0);

    const index = RangeIndex.open(path);
    const store = SqliteStore.open(state);
    try {
      const keys = await KeyCache.load(store);
      const corrections = await CorrectionCache.load(store);
      const app = createApp({ store, keys, index: () => index, corrections: () => corrections.current(), clock: { now: () => new Date("2026-11-15T12:00:00Z"), monotonicMs: () => 0 } });
      const issued = await store.createKey("test", "unlimited");
      await keys.refresh();
      const response = await app.handle(
        new Request("http://iplookup.test/v1/lookup/batch", { method: "POST", headers: { authorization: `Bearer ${issued.secret}`, "content-type": "application/json" }, body: JSON.stringify({ ips }) }),
      );
      expect(response.status).toBe(200);
      const online = await response.text();
      expect(online).toBe(offline.stdout.trimEnd());
      const results = (JSON.parse(online) as { results: LookupResult[] }).results;
      expect(results.map((result) => result.network)).toEqual(["1.1.1.0/25", "1.1.1.0/25", "1.1.1.0/25", "1.1.1.192/26", "1.1.1.128/26", "1.1.0.0/24", "9.9.9.0/25", "9.9.9.0/25", null, null]);
    } finally {
      await store.close();
    }
  });
});

/**
 * The model: the random data's rows and the corrections, read by brute force. The
 * space is cut at every edge of a row, a listed block and a correction; inside each
 * piece every address answers alike, and its answer is worked out from the rows and
 * corrections covering it, as CONTRACT §1 and §15 say, without the range index.
 */
interface World {
  readonly bits: 32 | 128;
  readonly asnRows: readonly { first: bigint; last: bigint; asn: number; name: string }[];
  readonly countryRows: readonly { first: bigint; last: bigint; code: string }[];
  readonly torBlocks: readonly { first: bigint; last: bigint }[];
  readonly corrections: readonly (Correction & { first: bigint; last: bigint; prefix: number })[];
}

const COUNTRY_NAMES: Record<string, string> = { AU: "Australia", FR: "France", DE: "Germany" };
const AS_VALUES = [null, [13335, "Cloudflare, Inc."], [64500, "Example"], [64501, "Example"]] as const;
const COUNTRY_VALUES = [null, "AU", "FR", "DE"] as const;

const covers = (span: { first: bigint; last: bigint }, x: bigint) => span.first <= x && x <= span.last;

function modelAnswer(world: World, x: bigint): string {
  const asn = world.asnRows.find((row) => covers(row, x));
  const country = world.countryRows.find((row) => covers(row, x));
  const tor = world.torBlocks.some((block) => covers(block, x));
  const answer: Record<string, unknown> = {
    found: asn !== undefined || country !== undefined || tor,
    asn: asn?.asn ?? null,
    as_name: asn?.name ?? null,
    country_code: country?.code ?? null,
    country: country ? COUNTRY_NAMES[country.code] : null,
  };
  const privacy: Record<string, unknown> = { hosting: null, tor, vpn: null, relay: null, proxy: null, service: null };
  // The corrections covering x, outermost first: each field from the innermost naming it,
  // and each one's privacy laid over in turn.
  const chain = world.corrections.filter((c) => covers(c, x)).sort((a, b) => a.prefix - b.prefix);
  if (chain.length > 0) {
    answer.found = true;
    for (const c of chain) {
      for (const field of ["asn", "as_name", "country_code"] as const) if (c.fields[field] !== undefined) answer[field] = c.fields[field];
      const named = c.fields.privacy;
      if (named === undefined) continue;
      Object.assign(privacy, named);
      if (named.service === undefined && (named.hosting !== undefined || named.relay !== undefined) && privacy.hosting !== true && privacy.relay !== true) privacy.service = null;
    }
    if (chain.some((c) => c.fields.country_code !== undefined)) answer.country = answer.country_code === null ? null : COUNTRY_NAMES[answer.country_code as string];
  }
  return JSON.stringify({ ...answer, privacy });
}

/** A service result in the model's form. */
function answerOf(result: LookupResult): string {
  const p = result.privacy;
  return JSON.stringify({
    found: result.found,
    asn: result.asn,
    as_name: result.as_name,
    country_code: result.country_code,
    country: result.country,
    privacy: { hosting: p.hosting, tor: p.tor, vpn: p.vpn, relay: p.relay, proxy: p.proxy, service: p.service },
  });
}

/** The model's pieces: sorted starts over the whole space and each piece's answer. */
function piecesOf(world: World): { starts: bigint[]; answers: string[] } {
  const end = 1n << BigInt(world.bits);
  const edges = new Set<bigint>([0n]);
  for (const span of [...world.asnRows, ...world.countryRows, ...world.torBlocks, ...world.corrections]) {
    edges.add(span.first);
    if (span.last + 1n < end) edges.add(span.last + 1n);
  }
  const starts = [...edges].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return { starts, answers: starts.map((start) => modelAnswer(world, start)) };
}

/** Whether every address from `first` to `last` answers `answer` in the model. */
function allAnswer(pieces: { starts: bigint[]; answers: string[] }, first: bigint, last: bigint, answer: string): boolean {
  const { starts, answers } = pieces;
  for (let i = 0; i < starts.length; i++) {
    const pieceLast = i + 1 < starts.length ? (starts[i + 1] as bigint) - 1n : first + (1n << 200n);
    if (pieceLast < first || (starts[i] as bigint) > last) continue;
    if (answers[i] !== answer) return false;
  }
  return true;
}

/** Whether a block crosses a correction's edge: holds part of a correction's block, not all of it or none. */
function crossesCorrection(world: World, first: bigint, last: bigint): boolean {
  return world.corrections.some((c) => c.first <= last && c.last >= first && !(c.first <= first && last <= c.last));
}

// The random worlds live in a public /20 (IPv4) or /116 (IPv6): 4,096 addresses from BASE.
const SPAN = 4096;
const BASE = { 4: 0x01020000n, 6: 0x2a0104f8000100000000000000000000n } as const; // 1.2.0.0, 2a01:4f8:1::

function textOf(value: bigint, bits: 32 | 128): string {
  return bits === 32 ? ipv4Text(Number(value)) : ipv6Text(wordsOf(value));
}

/** Rows of a layer, as lengths and values (0: no row): a few long ones, or many short ones (more than a walk compares before it keeps a long run). */
const pieceArb = (values: number) =>
  fc.oneof(
    fc.array(fc.record({ length: fc.integer({ min: 1, max: 700 }), value: fc.integer({ min: 0, max: values - 1 }) }), { maxLength: 9 }),
    fc.array(fc.record({ length: fc.integer({ min: 1, max: 12 }), value: fc.integer({ min: 0, max: values - 1 }) }), { minLength: 100, maxLength: 250 }),
  );

const privacyArb = fc
  .record({ hosting: fc.boolean(), tor: fc.boolean(), vpn: fc.boolean(), service: fc.constantFrom("S", null) }, { requiredKeys: [] })
  .filter((privacy) => Object.keys(privacy).length > 0);

const fieldsArb = fc
  .record({ country_code: fc.constantFrom("AU", "FR", null), asn: fc.constantFrom(13335, 64500, null), as_name: fc.constantFrom("Example", null), privacy: privacyArb }, { requiredKeys: [] })
  .filter((fields) => Object.keys(fields).length > 0) as fc.Arbitrary<CorrectionFields>;

const worldArb = fc.record({
  family: fc.constantFrom(4 as const, 6 as const),
  asn: pieceArb(AS_VALUES.length),
  country: pieceArb(COUNTRY_VALUES.length),
  tor: fc.array(fc.record({ hostBits: fc.integer({ min: 0, max: 9 }), offset: fc.integer({ min: 0, max: SPAN - 1 }) }), { minLength: 1, maxLength: 5 }),
  corrections: fc.array(fc.record({ hostBits: fc.integer({ min: 0, max: 12 }), offset: fc.integer({ min: 0, max: SPAN - 1 }), fields: fieldsArb }), { minLength: 1, maxLength: 6 }),
  addresses: fc.array(fc.integer({ min: 0, max: SPAN - 1 }), { minLength: 6, maxLength: 6 }),
});

/** Rows laid one after another from offset 512, value 0 leaving a gap, none past offset 3,584. */
function rowsOf<T>(pieces: readonly { length: number; value: number }[], base: bigint, make: (value: number) => T | null): (T & { first: bigint; last: bigint })[] {
  const rows: (T & { first: bigint; last: bigint })[] = [];
  let at = 512;
  for (const { length, value } of pieces) {
    const end = Math.min(at + length, 3584);
    const made = make(value);
    if (made !== null && end > at) rows.push({ ...made, first: base + BigInt(at), last: base + BigInt(end - 1) });
    at = end;
  }
  return rows;
}

function blockAt(base: bigint, bits: 32 | 128, hostBits: number, offset: number): { first: bigint; last: bigint; prefix: number; cidr: string } {
  const size = 1 << hostBits;
  const first = base + BigInt(Math.floor(offset / size) * size);
  return { first, last: first + BigInt(size - 1), prefix: bits - hostBits, cidr: `${textOf(first, bits)}/${bits - hostBits}` };
}

describe("random data and nested corrections against a brute-force model", () => {
  test("the network holds the address, answers alike throughout, crosses no correction's edge, and cannot be doubled", async () => {
    let worlds = 0;
    await fc.assert(
      fc.asyncProperty(worldArb, async (drawn) => {
        const bits = drawn.family === 4 ? 32 : 128;
        const base = BASE[drawn.family];
        const byBlock = new Map<string, World["corrections"][number]>();
        for (const { hostBits, offset, fields } of drawn.corrections) {
          const block = blockAt(base, bits, hostBits, offset);
          byBlock.set(block.cidr, { ...correction(block.cidr, fields), ...block });
        }
        const torBlocks = drawn.tor.map(({ hostBits, offset }) => blockAt(base, bits, hostBits, offset));
        // A source with no rows is refused by the importer: a layer drawn empty holds one
        // row far off instead (past SPAN, where nothing is sampled), in the model as in the data.
        const far = { first: base + 8192n, last: base + 8447n };
        const orFar = <T,>(rows: (T & { first: bigint; last: bigint })[], row: T) => (rows.length > 0 ? rows : [{ ...row, ...far }]);
        const world: World = {
          bits,
          asnRows: orFar(
            rowsOf(drawn.asn, base, (value) => {
              const as = AS_VALUES[value];
              return as ? { asn: as[0], name: as[1] } : null;
            }),
            { asn: AS_VALUES[1][0], name: AS_VALUES[1][1] },
          ),
          countryRows: orFar(
            rowsOf(drawn.country, base, (value) => {
              const code = COUNTRY_VALUES[value];
              return code ? { code } : null;
            }),
            { code: COUNTRY_VALUES[1] },
          ),
          torBlocks,
          corrections: [...byBlock.values()],
        };
        const n = ++worlds;
        const sources: SourceSpec[] = [];
        // Every source is given, so that the data always has the fields and the Tor signal.
        sources.push({ files: [{ path: fixture(dir, `w${n}-asn-${drawn.family}.csv`, world.asnRows.map((r) => `${textOf(r.first, bits)},${textOf(r.last, bits)},${r.asn},"${r.name}"`).join("\n")), format: "asn-csv", family: drawn.family }] });
        sources.push({ files: [{ path: fixture(dir, `w${n}-country-${drawn.family}.csv`, world.countryRows.map((r) => `${textOf(r.first, bits)},${textOf(r.last, bits)},${r.code}`).join("\n")), format: "country-csv", family: drawn.family }] });
        sources.push({ files: [{ path: fixture(dir, `w${n}-tor.txt`, `# tor\n${torBlocks.map((block) => block.cidr).join("\n")}\n`), format: "address-list" }], feed: { signal: "tor" } });
        const { index } = await dataSet(dir, sources);
        const look = lookups(index, ...world.corrections);
        const pieces = piecesOf(world);

        const sampled = [...drawn.addresses.map((offset) => base + BigInt(offset)), ...world.corrections.flatMap((c) => [c.first, c.last])];
        for (const x of sampled) {
          const ip = textOf(x, bits);
          const result = look(ip);
          const answer = modelAnswer(world, x);
          expect({ ip, answer: answerOf(result) }).toEqual({ ip, answer });
          if (result.network === null) {
            expect({ ip, found: result.found }).toEqual({ ip, found: false });
            continue;
          }
          const network = parseCorrectionBlock(result.network);
          const where = { ip, network: result.network };
          // It holds the address, answers alike throughout, and crosses no correction's edge.
          expect({ ...where, holds: covers(network, x) }).toEqual({ ...where, holds: true });
          expect({ ...where, alike: allAnswer(pieces, network.first, network.last, answer) }).toEqual({ ...where, alike: true });
          expect({ ...where, crosses: crossesCorrection(world, network.first, network.last) }).toEqual({ ...where, crosses: false });
          // Doubled, it would cross a correction's edge or hold an address that answers otherwise.
          if (network.prefix > 0) {
            const size = network.last - network.first + 1n;
            const parentFirst = (network.first / (2n * size)) * (2n * size);
            const parentLast = parentFirst + 2n * size - 1n;
            const doubles = !crossesCorrection(world, parentFirst, parentLast) && allAnswer(pieces, parentFirst, parentLast, answer);
            expect({ ...where, doubles }).toEqual({ ...where, doubles: false });
          }
          // Its ends and some addresses inside answer alike, with the same network.
          const size = network.last - network.first + 1n;
          for (const y of new Set([network.first, network.last, network.first + size / 2n, network.first + size / 4n, network.last - size / 3n])) {
            const other = look(textOf(y, bits));
            expect({ ip: other.ip, network: other.network, answer: answerOf(other) }).toEqual({ ip: other.ip, network: result.network, answer });
          }
        }
      }),
      { numRuns: 80 },
    );
  }, 120_000);
});

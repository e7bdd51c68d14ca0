import { describe, expect, test } from "bun:test";
import type { Address } from "../../src/address/address.ts";
import { checkAddress } from "../../src/address/check.ts";
import { ipv4Text, ipv6Text } from "../../src/address/parse.ts";
import { applyFields } from "../../src/corrections/apply-correction.ts";
import type { Correction, CorrectionFields } from "../../src/corrections/correction.ts";
import { parseCorrectionBlock } from "../../src/corrections/correction-rules.ts";
import { CorrectionTable } from "../../src/corrections/correction-table.ts";
import type { LookupResult } from "../../src/lookup/lookup-result.ts";
import { LookupService } from "../../src/lookup/lookup-service.ts";
import { defaultIndex } from "../support/default-data.ts";

/**
 * The overlay of local corrections on lookups (CONTRACT §15), on the real default data:
 * what each field becomes, nested blocks, and `network` at every edge, through both of
 * the lookup service's paths (the objects of `lookup`, the bytes of `lookupJson`).
 */

const index = defaultIndex();
const plain = new LookupService(() => index);

function correction(cidr: string, fields: CorrectionFields): Correction {
  return { cidr, fields, note: null, createdAt: "2026-11-05T10:00:00.000Z", updatedAt: "2026-11-05T10:00:00.000Z" };
}

function serviceWith(...corrections: Correction[]) {
  const table = CorrectionTable.build(corrections);
  const service = new LookupService(() => index, () => table);
  /** One address's result, from both paths, which must agree byte for byte. */
  const look = (ip: string): LookupResult => {
    const addresses = service.resolve([ip]);
    const [result] = service.lookup(addresses);
    const json = new TextDecoder().decode(service.lookupJson(addresses, false).body);
    expect(json).toBe(JSON.stringify(result));
    return result!;
  };
  return { service, look, corrections };
}

/** A result's privacy object (results carry one only where a correction names it, until the data has signals). */
const privacyOf = (result: LookupResult) => (result as unknown as { privacy?: unknown }).privacy;

const data = (ip: string) => plain.lookup(plain.resolve([ip]))[0]!;

/** An address as a number of its family (bigint for both), and its family's width. */
function valueOf(ip: string): { value: bigint; bits: 32 | 128 } {
  const checked = checkAddress(ip);
  if (!checked.ok) throw new Error(ip);
  const address = checked.address as Address;
  if (address.version === 4) return { value: BigInt(address.value), bits: 32 };
  return { value: address.words.reduce((v, w) => (v << 32n) | BigInt(w), 0n), bits: 128 };
}

function rangeOf(cidr: string): { first: bigint; last: bigint; prefix: number } {
  const block = parseCorrectionBlock(cidr);
  return { first: block.first, last: block.last, prefix: block.prefix };
}

/**
 * The network rule at an address (CONTRACT §1 with §15): the answer's network holds the
 * address, crosses no correction's edge (each correction's block holds all of it or
 * none of it), every address in it answers alike, and it is the largest such block (its
 * parent breaks one of these). "Alike" is read piece by piece: between two edges of the
 * data's segments or the corrections' blocks every address answers the same, so the
 * first address of each piece stands for it.
 */
function expectNetworkRule(result: LookupResult, corrections: readonly Correction[], look: (ip: string) => LookupResult): void {
  const { value, bits } = valueOf(result.ip);
  const network = rangeOf(result.network!);
  expect(network.first <= value && value <= network.last).toBe(true);
  const family = bits === 32 ? 4 : 6;
  const blocks = corrections.filter((c) => parseCorrectionBlock(c.cidr).version === family).map((c) => rangeOf(c.cidr));
  const crosses = (first: bigint, last: bigint) => blocks.some((block) => block.first <= last && block.last >= first && !(block.first <= first && last <= block.last));
  const answer = JSON.stringify(fieldsOf(result));
  const alike = (first: bigint, last: bigint) => piecesOf(first, last, bits, blocks).every((start) => JSON.stringify(fieldsOf(look(textOf(start, bits)))) === answer);
  expect({ ip: result.ip, network: result.network, crosses: crosses(network.first, network.last), alike: alike(network.first, network.last) }).toEqual({ ip: result.ip, network: result.network, crosses: false, alike: true });
  if (network.prefix > 0) {
    const size = 1n << BigInt(bits - network.prefix + 1);
    const parentFirst = (value / size) * size;
    expect(crosses(parentFirst, parentFirst + size - 1n) || !alike(parentFirst, parentFirst + size - 1n)).toBe(true);
  }
}

function fieldsOf(result: LookupResult): Record<string, unknown> {
  const { ip: _ip, network: _network, ...fields } = result;
  return fields;
}

/** The first address of each piece of `first`…`last` cut at the data's segment starts and the blocks' edges. */
function piecesOf(first: bigint, last: bigint, bits: 32 | 128, blocks: readonly { first: bigint; last: bigint }[]): bigint[] {
  const starts = new Set<bigint>([first]);
  const image = index.image;
  const words = bits === 32 ? 1 : 4;
  const table = bits === 32 ? image.v4Starts : image.v6Starts;
  const count = table.length / words;
  const at = (i: number) => table.subarray(i * words, i * words + words).reduce((v, w) => (v << 32n) | BigInt(w), 0n);
  // Binary search for the first segment starting after `first`.
  let low = 0;
  let high = count;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (at(mid) <= first) low = mid + 1;
    else high = mid;
  }
  for (let i = low; i < count && at(i) <= last; i++) starts.add(at(i));
  for (const block of blocks) {
    if (block.first > first && block.first <= last) starts.add(block.first);
    if (block.last >= first && block.last < last) starts.add(block.last + 1n);
  }
  return [...starts].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

function textOf(value: bigint, bits: 32 | 128): string {
  if (bits === 32) return ipv4Text(Number(value));
  return ipv6Text([0, 1, 2, 3].map((w) => Number((value >> BigInt(96 - 32 * w)) & 0xffffffffn)));
}

describe("without corrections", () => {
  test("an empty table is never built: the service answers as the data does", () => {
    const { look } = serviceWith();
    for (const ip of ["1.1.1.1", "8.8.8.8", "2606:4700:4700::1111"]) expect(look(ip)).toEqual(data(ip));
  });
});

describe("one correction, IPv4", () => {
  // The default data answers 1.1.1.0/24 as one network (AS13335, AU).
  const base = data("1.1.1.1");
  test("the data's network is the /24 these tests cut", () => {
    expect(base).toMatchObject({ network: "1.1.1.0/24", asn: 13335, country_code: "AU" });
  });

  test("every field named is replaced; country follows country_code; the others stay", () => {
    const { look } = serviceWith(correction("1.1.1.0/25", { country_code: "DE", asn: 64500, as_name: "Example Net" }));
    expect(look("1.1.1.1")).toEqual({ ...base, network: "1.1.1.0/25", country_code: "DE", country: "Germany", asn: 64500, as_name: "Example Net" });
  });

  test("network at every edge: first and last address inside, just outside on either side", () => {
    const corrections = [correction("1.1.1.64/26", { country_code: "NZ" })];
    const { look } = serviceWith(...corrections);
    const cases: [string, string, string][] = [
      ["1.1.1.63", "1.1.1.0/26", "AU"], // just below
      ["1.1.1.64", "1.1.1.64/26", "NZ"], // first inside
      ["1.1.1.100", "1.1.1.64/26", "NZ"],
      ["1.1.1.127", "1.1.1.64/26", "NZ"], // last inside
      ["1.1.1.128", "1.1.1.128/25", "AU"], // just above
      ["1.1.1.0", "1.1.1.0/26", "AU"],
      ["1.1.1.255", "1.1.1.128/25", "AU"],
    ];
    for (const [ip, network, country] of cases) {
      const result = look(ip);
      expect([ip, result.network, result.country_code]).toEqual([ip, network, country]);
      expectNetworkRule(result, corrections, look);
    }
    // Outside the data's /24 nothing changes.
    for (const ip of ["1.1.0.255", "1.1.2.0", "8.8.8.8"]) expect(look(ip)).toEqual(data(ip));
  });

  test("a correction larger than the data's networks: each answer keeps the data's network where its neighbours still differ (here in their AS)", () => {
    const corrections = [correction("1.1.0.0/16", { country_code: "JP" })];
    const { look } = serviceWith(...corrections);
    for (const ip of ["1.1.1.1", "1.1.0.1", "1.1.200.3"]) {
      const result = look(ip);
      expect(result.network).toBe(data(ip).network);
      expect(result.country).toBe("Japan");
      expectNetworkRule(result, corrections, look);
    }
    // Just outside the block: the data's answer, its network cut at the block's edge.
    for (const ip of ["1.0.255.255", "1.2.0.0"]) {
      const result = look(ip);
      expect(result.country_code).toBe(data(ip).country_code);
      expectNetworkRule(result, corrections, look);
    }
  });

  test("null makes the answer say null; city and privacy are added when named", () => {
    const { look } = serviceWith(correction("1.1.1.0/24", { asn: null, as_name: null, city: "Sydney", privacy: { hosting: true, service: "Edge" } }));
    expect(look("1.1.1.1") as unknown).toEqual({
      ...base,
      asn: null,
      as_name: null,
      city: "Sydney",
      privacy: { hosting: true, tor: null, vpn: null, relay: null, proxy: null, service: "Edge" },
    });
  });
});

describe("nested blocks", () => {
  const corrections = [
    correction("1.1.1.0/24", { country_code: "FR", asn: 1, privacy: { vpn: true, hosting: true, service: "Outer" } }),
    correction("1.1.1.0/26", { country_code: "DE" }),
    correction("1.1.1.0/28", { asn: 2, privacy: { vpn: false } }),
    correction("1.1.1.128/25", { city: "Lyon" }),
  ];
  const { look } = serviceWith(...corrections);

  test("each field, and each privacy signal, comes from the most specific block naming it", () => {
    expect(look("1.1.1.1")).toMatchObject({ network: "1.1.1.0/28", country_code: "DE", country: "Germany", asn: 2, privacy: { vpn: false, hosting: true, service: "Outer" } });
    expect(look("1.1.1.20")).toMatchObject({ network: "1.1.1.16/28", country_code: "DE", asn: 1, privacy: { vpn: true } });
    expect(look("1.1.1.40")).toMatchObject({ network: "1.1.1.32/27", country_code: "DE", asn: 1 });
    expect(look("1.1.1.100")).toMatchObject({ network: "1.1.1.64/26", country_code: "FR", country: "France", asn: 1 });
    expect(look("1.1.1.200")).toMatchObject({ network: "1.1.1.128/25", country_code: "FR", asn: 1, city: "Lyon" });
    expect(look("1.1.1.100").city).toBeUndefined();
  });

  test("the network rule holds at every address of the block and around it", () => {
    for (let last = -2; last <= 257; last++) {
      const ip = last < 0 ? `1.1.0.${256 + last}` : last > 255 ? `1.1.2.${last - 256}` : `1.1.1.${last}`;
      expectNetworkRule(look(ip), corrections, look);
    }
  });

  test("a batch answers each address as a single lookup does, in order", () => {
    const ips = ["1.1.1.1", "8.8.8.8", "1.1.1.200", "1.1.1.1", "2606:4700:4700::1111"];
    const table = CorrectionTable.build(corrections);
    const service = new LookupService(() => index, () => table);
    const body = JSON.parse(new TextDecoder().decode(service.lookupJson(service.resolve(ips), true).body));
    expect(body).toEqual({ results: ips.map(look) });
  });
});

describe("nested privacy: each block's laid over in turn, outermost first", () => {
  // 5.9.17.1: Hetzner in the default data, hosting true with the service "Hetzner".
  test("an inner block setting hosting false without a service clears the service an outer block named", () => {
    expect(data("5.9.17.1").privacy).toMatchObject({ hosting: true, relay: null, service: "Hetzner" });
    const corrections = [correction("5.9.17.0/24", { privacy: { hosting: true, service: "Our DC" } }), correction("5.9.17.0/28", { privacy: { hosting: false } })];
    const { look } = serviceWith(...corrections);
    expect(look("5.9.17.1")).toMatchObject({ network: "5.9.17.0/28", privacy: { hosting: false, service: null } });
    expect(look("5.9.17.100")).toMatchObject({ network: "5.9.17.64/26", privacy: { hosting: true, service: "Our DC" } });
    for (const ip of ["5.9.17.0", "5.9.17.1", "5.9.17.15", "5.9.17.16", "5.9.17.255"]) expectNetworkRule(look(ip), corrections, look);
  });

  test("an inner block keeping hosting true without a service keeps the service an outer block named", () => {
    const { look } = serviceWith(correction("5.9.17.0/24", { privacy: { hosting: true, service: "Our DC" } }), correction("5.9.17.0/28", { privacy: { hosting: true, tor: false } }));
    expect(look("5.9.17.1").privacy).toMatchObject({ hosting: true, tor: false, service: "Our DC" });
  });

  test("relay: an inner block setting it false clears an outer block's relay service; one naming a service keeps its own", () => {
    const off = serviceWith(correction("1.1.1.0/24", { privacy: { hosting: false, relay: true, service: "Example Relay" } }), correction("1.1.1.0/28", { privacy: { relay: false } }));
    expect(off.look("1.1.1.1").privacy).toEqual({ hosting: false, tor: null, vpn: null, relay: false, proxy: null, service: null });
    expect(off.look("1.1.1.100").privacy).toMatchObject({ relay: true, service: "Example Relay" });
    const named = serviceWith(correction("1.1.1.0/24", { privacy: { hosting: false, relay: true, service: "Example Relay" } }), correction("1.1.1.0/28", { privacy: { relay: false, service: "Kept" } }));
    expect(named.look("1.1.1.1").privacy).toMatchObject({ relay: false, service: "Kept" });
  });

  test("a service an outer block cleared stays cleared where an inner block sets hosting again without naming one", () => {
    const { look } = serviceWith(correction("5.9.17.0/24", { privacy: { hosting: false } }), correction("5.9.17.0/28", { privacy: { hosting: true } }));
    expect(look("5.9.17.1").privacy).toMatchObject({ hosting: true, service: null });
    expect(look("5.9.17.100").privacy).toMatchObject({ hosting: false, service: null });
  });
});

describe("IPv6", () => {
  const ip = "2606:4700:4700::1111";
  const base = data(ip);
  const outer = rangeOf(base.network!);

  test("a correction inside the data's network, nested, with the network rule at its edges", () => {
    const corrections = [correction("2606:4700:4700::1100/120", { country_code: "CA" }), correction("2606:4700:4700::1110/124", { asn: 64512 })];
    expect(outer.prefix).toBeLessThan(120);
    const { look } = serviceWith(...corrections);
    expect(look(ip)).toEqual({ ...base, network: "2606:4700:4700::1110/124", country_code: "CA", country: "Canada", asn: 64512 });
    expect(look("2606:4700:4700::1100")).toMatchObject({ network: "2606:4700:4700::1100/124", country_code: "CA", asn: base.asn });
    expect(look("2606:4700:4700::11ff")).toMatchObject({ network: "2606:4700:4700::1180/121", country_code: "CA" });
    for (const edge of ["2606:4700:4700::10ff", "2606:4700:4700::1100", "2606:4700:4700::110f", "2606:4700:4700::1110", "2606:4700:4700::111f", "2606:4700:4700::1120", "2606:4700:4700::11ff", "2606:4700:4700::1200"]) {
      const result = look(edge);
      expectNetworkRule(result, corrections, look);
      const inside = rangeOf("2606:4700:4700::1100/120");
      const { value } = valueOf(edge);
      expect(result.country_code).toBe(value >= inside.first && value <= inside.last ? "CA" : data(edge).country_code);
    }
  });

  test("IPv4 corrections never touch IPv6 answers, nor the reverse", () => {
    const { look } = serviceWith(correction("0.0.0.0/0", { country_code: "DE" }));
    expect(look(ip)).toEqual(base);
    const v6 = serviceWith(correction("::/0", { country_code: "DE" }));
    expect(v6.look("1.1.1.1")).toEqual(data("1.1.1.1"));
    expect(v6.look(ip).country_code).toBe("DE");
  });

  test("an IPv4-mapped address is answered, and corrected, as its IPv4 address", () => {
    const { look } = serviceWith(correction("1.1.1.0/24", { country_code: "DE" }));
    expect(look("::ffff:1.1.1.1")).toMatchObject({ ip: "1.1.1.1", country_code: "DE" });
  });
});

describe("addresses the data does not cover", () => {
  // A public IPv4 gap of the default data, found rather than assumed.
  const gap = (() => {
    for (const [start, end, id] of index.segments(4)) {
      if (id !== 0 || end - start < 255n || start < 16777216n) continue;
      const first = ((start + 255n) / 256n) * 256n;
      if (first + 255n > end) continue;
      const ip = ipv4Text(Number(first) + 1);
      if (checkAddress(ip).ok && !data(ip).found) return { start, end, block: `${ipv4Text(Number(first))}/24`, ip };
    }
    throw new Error("no public gap of a /24 in the default data");
  })();

  test("a correction makes them found, the network inside the block (and here the gap: the records around it have an AS name)", () => {
    const corrections = [correction(gap.block, { country_code: "SE", asn: 64496 })];
    const { look } = serviceWith(...corrections);
    const result = look(gap.ip);
    expect(result).toMatchObject({ found: true, country_code: "SE", country: "Sweden", asn: 64496, as_name: null });
    expectNetworkRule(result, corrections, look);
    const network = rangeOf(result.network!);
    const block = rangeOf(gap.block);
    expect(network.first >= block.first && network.last <= block.last && network.first >= gap.start && network.last <= gap.end).toBe(true);
  });
});

describe("applyFields", () => {
  test("continent_code and continent follow a corrected country_code where the result has them", () => {
    const result = { ip: "1.1.1.1", version: 4, found: true, network: "1.1.1.0/24", asn: 1, as_name: "x", country_code: "AU", country: "Australia", continent_code: "OC", continent: "Oceania", privacy: { hosting: null, tor: null, vpn: null, relay: null, proxy: null, service: null } } as LookupResult;
    applyFields(result, { country_code: "BR" });
    expect(result).toMatchObject({ country_code: "BR", country: "Brazil", continent_code: "SA", continent: "South America" });
    applyFields(result, { country_code: null });
    expect(result).toMatchObject({ country_code: null, country: null, continent_code: null, continent: null });
  });

  test("privacy: named signals replace the result's; hosting or relay set false without a service clears the service", () => {
    const result = { privacy: { hosting: true, tor: false, vpn: null, relay: false, proxy: null, service: "Amazon EC2" } } as unknown as LookupResult;
    applyFields(result, { privacy: [{ tor: true }] });
    expect(privacyOf(result)).toEqual({ hosting: true, tor: true, vpn: null, relay: false, proxy: null, service: "Amazon EC2" });
    applyFields(result, { privacy: [{ hosting: false }] });
    expect(privacyOf(result)).toEqual({ hosting: false, tor: true, vpn: null, relay: false, proxy: null, service: null });
  });
});

describe("random nested corrections against a brute-force reading of the rule", () => {
  test("every address of a /24 answers each field from the most specific block naming it, and keeps the network rule", () => {
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) >>> 0;
      return (seed >>> 8) % n;
    };
    const countries = ["DE", "FR", "NL", "JP", null];
    for (let round = 0; round < 20; round++) {
      const byBlock = new Map<string, Correction>();
      for (let i = 0; i < 1 + random(8); i++) {
        const prefix = 24 + random(9);
        const size = 2 ** (32 - prefix);
        const first = Math.floor(random(256) / size) * size;
        const fields: Record<string, unknown> = {};
        if (random(2)) fields.country_code = countries[random(countries.length)];
        if (random(2)) fields.asn = random(3) === 0 ? null : 64496 + random(10);
        if (random(3) === 0) fields.privacy = random(2) ? { tor: random(2) === 1 } : { vpn: true, service: `S${round}` };
        if (Object.keys(fields).length === 0) fields.as_name = `N${i}`;
        byBlock.set(`1.1.1.${first}/${prefix}`, correction(`1.1.1.${first}/${prefix}`, fields as CorrectionFields));
      }
      const corrections = [...byBlock.values()];
      const { look } = serviceWith(...corrections);
      for (let last = 0; last < 256; last++) {
        const ip = `1.1.1.${last}`;
        const covering = corrections
          .map((c) => ({ c, range: rangeOf(c.cidr) }))
          .filter(({ range }) => range.first <= BigInt(16843008 + last) && BigInt(16843008 + last) <= range.last)
          .sort((a, b) => b.range.prefix - a.range.prefix);
        const expected: Record<string, unknown> = { ...data(ip) };
        for (const field of ["country_code", "asn", "as_name"] as const) {
          const from = covering.find(({ c }) => c.fields[field] !== undefined);
          if (from) expected[field] = from.c.fields[field];
        }
        if (expected.country_code !== data(ip).country_code) expected.country = expected.country_code === null ? null : new Intl.DisplayNames(["en"], { type: "region" }).of(expected.country_code as string);
        const privacy: Record<string, unknown> = {};
        for (const member of ["hosting", "tor", "vpn", "relay", "proxy", "service"]) {
          const from = covering.find(({ c }) => (c.fields.privacy as Record<string, unknown> | undefined)?.[member] !== undefined);
          if (from) privacy[member] = (from.c.fields.privacy as Record<string, unknown>)[member];
        }
        const result = look(ip) as unknown as Record<string, unknown>;
        const { network: _network, privacy: answered, ...rest } = result;
        // The data's own privacy (every answer has it) is what no correction names.
        const { network: _dataNetwork, privacy: dataPrivacy, ...expectedRest } = expected;
        expect({ ip, ...rest }).toEqual({ ip, ...expectedRest });
        if (Object.keys(privacy).length > 0) expect(answered).toMatchObject(privacy);
        else expect(answered).toEqual(dataPrivacy);
        expectNetworkRule(look(ip), corrections, look);
      }
    }
  });
});

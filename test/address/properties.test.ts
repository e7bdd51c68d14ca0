import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import type { Address } from "../../src/address/address.ts";
import { checkAddress, publicAddress } from "../../src/address/check.ts";
import { classifyAddress } from "../../src/address/classify.ts";
import { parseAddress } from "../../src/address/parse.ts";

/**
 * Properties of the parser and classifier over generated input. The classifier is
 * checked against a table of the IANA registries written here, independently of
 * src/address/special-purpose.ts: [first address, prefix, reason or null for public].
 */
const IPV4_TABLE: Array<[string, number, string | null]> = [
  ["0.0.0.0", 8, "this-network"], ["0.0.0.0", 32, "this-host"], ["10.0.0.0", 8, "private-use"],
  ["100.64.0.0", 10, "shared-address-space"], ["127.0.0.0", 8, "loopback"], ["169.254.0.0", 16, "link-local"],
  ["172.16.0.0", 12, "private-use"], ["192.0.0.0", 24, "ietf-protocol-assignments"], ["192.0.0.0", 29, "ipv4-service-continuity"],
  ["192.0.0.8", 32, "ipv4-dummy-address"], ["192.0.0.9", 32, null], ["192.0.0.10", 32, null],
  ["192.0.0.170", 32, "nat64-dns64-discovery"], ["192.0.0.171", 32, "nat64-dns64-discovery"], ["192.0.2.0", 24, "documentation"],
  ["192.88.99.2", 32, "6a44-relay-anycast"],
  ["192.168.0.0", 16, "private-use"], ["198.18.0.0", 15, "benchmarking"], ["198.51.100.0", 24, "documentation"],
  ["203.0.113.0", 24, "documentation"], ["224.0.0.0", 4, "multicast"], ["240.0.0.0", 4, "reserved"], ["255.255.255.255", 32, "limited-broadcast"],
];

/** [first address, prefix, reason, globally reachable (null: N/A)] */
const IPV6_TABLE: Array<[string, number, string, boolean | null]> = [
  ["::1", 128, "loopback", false], ["::", 128, "unspecified", false], ["::ffff:0:0", 96, "ipv4-mapped", false],
  ["64:ff9b::", 96, "ipv4-ipv6-translation", true], ["64:ff9b:1::", 48, "ipv4-ipv6-translation", false],
  ["100::", 64, "discard-only", false], ["100:0:0:1::", 64, "dummy-prefix", false],
  ["2001::", 23, "ietf-protocol-assignments", false], ["2001::", 32, "teredo", null],
  ["2001:1::1", 128, "port-control-protocol-anycast", true], ["2001:1::2", 128, "turn-anycast", true], ["2001:1::3", 128, "dns-sd-srp-anycast", true],
  ["2001:2::", 48, "benchmarking", false], ["2001:3::", 32, "amt", true], ["2001:4:112::", 48, "as112", true],
  ["2001:10::", 28, "orchid", null], ["2001:20::", 28, "orchidv2", true], ["2001:30::", 28, "drone-remote-id", true],
  ["2001:db8::", 32, "documentation", false], ["2002::", 16, "6to4", null], ["2620:4f:8000::", 48, "as112", true],
  ["3fff::", 20, "documentation", false], ["5f00::", 16, "segment-routing-sids", false], ["fc00::", 7, "unique-local", false],
  ["fe80::", 10, "link-local", false], ["ff00::", 8, "multicast", false], ["2000::", 3, "", true],
];
const MAX6 = (1n << 128n) - 1n;

function v6(text: string): bigint {
  const [head = "", tail] = text.split("::");
  const groups = (part: string) => (part === "" ? [] : part.split(":"));
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const all = [...left, ...Array<string>(8 - left.length - right.length).fill("0"), ...right];
  return all.reduce((value, group) => (value << 16n) | BigInt(parseInt(group, 16)), 0n);
}

/** Outside 2000::/3 nothing is public; inside, the most specific entry with a value decides. */
function expectedV6(value: bigint): string | null {
  const containing = IPV6_TABLE.filter(([start, prefix]) => {
    const host = BigInt(128 - prefix);
    return value >> host === v6(start) >> host;
  }).sort((a, b) => b[1] - a[1]);
  const named = containing.find(([, , reason]) => reason !== "");
  const inGlobal = value >> 125n === 1n;
  if (!inGlobal) return named?.[2] ?? "reserved";
  const decided = containing.find(([, , , reachable]) => reachable !== null)!;
  return decided[3] ? null : (named?.[2] ?? null);
}

function v4(text: string): number {
  return text.split(".").reduce((value, part) => value * 256 + Number(part), 0);
}

/** The expected reason: the most specific table entry containing the address. */
function expectedV4(value: number): string | null {
  let best: [number, string | null] = [-1, null];
  for (const [start, prefix, reason] of IPV4_TABLE) {
    const size = 2 ** (32 - prefix);
    const first = v4(start);
    if (value >= first && value < first + size && prefix > best[0]) best = [prefix, reason];
  }
  return best[1];
}

const ipv4Text = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((parts) => parts.join("."));
const ipv6Words = fc.tuple(fc.nat(0xffffffff), fc.nat(0xffffffff), fc.nat(0xffffffff), fc.nat(0xffffffff));

describe("parser properties", () => {
  test("no input makes it throw; it returns an Address or null", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: "binary" }), fc.stringMatching(/^[0-9a-fA-F:.%\[\]\/ x-]{0,50}$/)), (text) => {
        const result = parseAddress(text);
        expect(result === null || result.version === 4 || result.version === 6).toBe(true);
        const checked = checkAddress(text);
        expect(["invalid_address", "address_not_public", undefined]).toContain(checked.ok ? undefined : checked.code);
        expect(publicAddress(text)).toEqual(checked.ok ? checked.address : null);
      }),
      { numRuns: 20_000 },
    );
  });

  test("canonical text round-trips, for IPv4 and IPv6", () => {
    fc.assert(
      fc.property(fc.oneof(ipv4Text, ipv6Words.map((words) => words.map((w) => (w >>> 16).toString(16) + ":" + (w & 0xffff).toString(16)).join(":"))), (text) => {
        const address = parseAddress(text);
        expect(address).not.toBeNull();
        expect(parseAddress(address!.text)).toEqual(address!);
        expect(parseAddress(address!.text.toUpperCase())).toEqual(address!);
      }),
      { numRuns: 20_000 },
    );
  });

  test("a legacy IPv4 spelling is never read as an address", () => {
    const legacy = fc.oneof(
      fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255)).map((parts) => parts.join(".")),
      fc.tuple(fc.integer({ min: 1, max: 255 }), fc.nat(255)).map(([a, b]) => `0${a}.${b}.1.1`),
      fc.nat(255).map((a) => `0x${a.toString(16)}.1.1.1`),
      fc.nat(0xffffffff).map(String),
    );
    fc.assert(fc.property(legacy, (text) => expect(parseAddress(text)).toBeNull()), { numRuns: 10_000 });
  });
});

describe("classifier properties", () => {
  test("every IPv4 address classifies as the independent table says", () => {
    fc.assert(
      fc.property(fc.nat(0xffffffff), (value) => {
        const address: Address = { version: 4, text: "", value };
        expect(classifyAddress(address)).toBe(expectedV4(value));
      }),
      { numRuns: 50_000 },
    );
  });

  test("addresses near every table edge classify as the table says", () => {
    const edges = IPV4_TABLE.flatMap(([start, prefix]) => {
      const first = v4(start);
      const last = first + 2 ** (32 - prefix) - 1;
      return [first - 1, first, last, last + 1].filter((value) => value >= 0 && value <= 0xffffffff);
    });
    fc.assert(
      fc.property(fc.constantFrom(...edges), fc.integer({ min: -3, max: 3 }), (edge, step) => {
        const value = Math.min(0xffffffff, Math.max(0, edge + step));
        expect(classifyAddress({ version: 4, text: "", value })).toBe(expectedV4(value));
      }),
      { numRuns: 5_000 },
    );
  });

  test("every IPv6 address classifies as the independent table says", () => {
    const near = fc.tuple(fc.constantFrom(...IPV6_TABLE.map(([start]) => start)), fc.bigInt({ min: -4n, max: 1n << 40n })).map(([start, offset]) => {
      const value = v6(start) + offset;
      return value < 0n ? 0n : value > MAX6 ? MAX6 : value;
    });
    fc.assert(
      fc.property(fc.oneof(fc.bigInt({ min: 0n, max: MAX6 }), near), (value) => {
        const words = [0, 1, 2, 3].map((w) => Number((value >> BigInt(96 - 32 * w)) & 0xffffffffn)) as [number, number, number, number];
        expect({ at: value.toString(16), reason: classifyAddress({ version: 6, text: "", words }) }).toEqual({ at: value.toString(16), reason: expectedV6(value) });
      }),
      { numRuns: 50_000 },
    );
  });
});

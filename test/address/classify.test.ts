import { describe, expect, test } from "bun:test";
import type { Address } from "../../src/address/address.ts";
import { checkAddress, publicAddress } from "../../src/address/check.ts";
import { classifyAddress } from "../../src/address/classify.ts";
import { IPV4_SPECIAL_BLOCKS, IPV6_SPECIAL_BLOCKS, type SpecialBlock } from "../../src/address/special-purpose.ts";

/** An Address from a BigInt, built here without the parser under test. */
function addressOf(value: bigint, family: 4 | 6): Address {
  if (family === 4) return { version: 4, text: "", value: Number(value) };
  const words = [0, 1, 2, 3].map((w) => Number((value >> BigInt(96 - 32 * w)) & 0xffffffffn)) as [number, number, number, number];
  return { version: 6, text: "", words };
}

/** The value of an address written in a table (dotted quad, or IPv6 with at most one `::`). */
function valueOf(text: string): bigint {
  if (!text.includes(":")) return text.split(".").reduce((value, part) => (value << 8n) | BigInt(part), 0n);
  const [head = "", tail] = text.split("::");
  const groups = (part: string) => (part === "" ? [] : part.split(":"));
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const all = [...left, ...Array<string>(8 - left.length - right.length).fill("0"), ...right];
  return all.reduce((value, group) => (value << 16n) | BigInt(`0x${group}`), 0n);
}

/** First and last address of a table block, and its family. */
function bounds(cidr: string): [bigint, bigint, 4 | 6] {
  const [text = "", prefix = ""] = cidr.split("/");
  const family = text.includes(":") ? 6 : 4;
  const host = BigInt((family === 4 ? 32 : 128) - Number(prefix));
  const start = valueOf(text);
  return [start, start + (1n << host) - 1n, family];
}

/**
 * The expected answer at an address, from the registry table by a different method than
 * the classifier's: the most specific block containing the address decides the reason;
 * reachability is that of the most specific block whose column is not N/A.
 */
function expected(value: bigint, family: 4 | 6): string | null {
  const blocks = (family === 4 ? IPV4_SPECIAL_BLOCKS : IPV6_SPECIAL_BLOCKS)
    .map((block) => ({ block, range: bounds(block.cidr) }))
    .filter(({ range }) => range[0] <= value && value <= range[1])
    .sort((a, b) => Number(a.range[1] - a.range[0] - (b.range[1] - b.range[0])));
  const reason = blocks[0]?.block.reason;
  const decided = blocks.find(({ block }) => block.reachable !== null)?.block.reachable;
  if (family === 4) {
    if (value >= 0xe0000000n && value <= 0xefffffffn) return "multicast";
    return decided === false ? reason! : null;
  }
  if (value >> 120n === 0xffn) return "multicast";
  const inGlobalUnicast = value >> 125n === 1n;
  if (!inGlobalUnicast) return reason ?? "reserved";
  return decided === false ? reason! : null;
}

function check(block: SpecialBlock) {
  const [start, end, family] = bounds(block.cidr);
  const max = family === 4 ? 0xffffffffn : (1n << 128n) - 1n;
  const probes = [start, end, ...(start > 0n ? [start - 1n] : []), ...(end < max ? [end + 1n] : [])];
  for (const probe of probes) {
    expect({ cidr: block.cidr, probe: probe.toString(16), reason: classifyAddress(addressOf(probe, family)) }).toEqual({
      cidr: block.cidr,
      probe: probe.toString(16),
      reason: expected(probe, family),
    });
  }
  // An edge that no more specific block covers carries the block's own answer: its reason
  // when the registry says it is not globally reachable.
  if (block.reachable === false) {
    for (const edge of [start, end]) {
      if (!moreSpecificCovers(block, edge, family)) expect(classifyAddress(addressOf(edge, family))).toBe(block.reason);
    }
  }
}

function moreSpecificCovers(block: SpecialBlock, value: bigint, family: 4 | 6): boolean {
  const [start, end] = bounds(block.cidr);
  return (family === 4 ? IPV4_SPECIAL_BLOCKS : IPV6_SPECIAL_BLOCKS).some((other) => {
    const [otherStart, otherEnd] = bounds(other.cidr);
    const smaller = otherEnd - otherStart < end - start;
    return smaller && otherStart <= value && value <= otherEnd;
  });
}

describe("the registry table", () => {
  test("every block is a well-formed CIDR with zero host bits and a kebab-case reason", () => {
    for (const block of [...IPV4_SPECIAL_BLOCKS, ...IPV6_SPECIAL_BLOCKS]) {
      const [text = "", prefixText = ""] = block.cidr.split("/");
      const bits = text.includes(":") ? 128 : 32;
      const prefix = Number(prefixText);
      expect({ cidr: block.cidr, prefixOk: Number.isInteger(prefix) && prefix >= 0 && prefix <= bits }).toEqual({ cidr: block.cidr, prefixOk: true });
      const hostMask = (1n << BigInt(bits - prefix)) - 1n;
      expect({ cidr: block.cidr, hostBits: valueOf(text) & hostMask }).toEqual({ cidr: block.cidr, hostBits: 0n });
      expect(block.reason).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
    }
  });

  test("no block is listed twice", () => {
    const cidrs = [...IPV4_SPECIAL_BLOCKS, ...IPV6_SPECIAL_BLOCKS].map((block) => block.cidr);
    expect(new Set(cidrs).size).toBe(cidrs.length);
  });

  test("it holds every row of both registries: 26 IPv4 blocks, 25 IPv6 blocks", () => {
    expect(IPV4_SPECIAL_BLOCKS.length).toBe(26);
    expect(IPV6_SPECIAL_BLOCKS.length).toBe(25);
  });
});

describe("every registry block at its edges and one step outside", () => {
  for (const block of [...IPV4_SPECIAL_BLOCKS, ...IPV6_SPECIAL_BLOCKS]) {
    test(block.cidr, () => check(block));
  }
  test("multicast and the edges of 2000::/3", () => {
    for (const cidr of ["224.0.0.0/4", "ff00::/8", "2000::/3"]) check({ cidr, reason: "", reachable: null });
  });
});

describe("well-known answers", () => {
  test.each([
    ["8.8.8.8", null],
    ["1.1.1.1", null],
    ["10.0.0.1", "private-use"],
    ["172.16.0.1", "private-use"],
    ["172.32.0.1", null],
    ["192.168.1.1", "private-use"],
    ["100.64.0.1", "shared-address-space"],
    ["127.0.0.1", "loopback"],
    ["169.254.1.1", "link-local"],
    ["0.1.2.3", "this-network"],
    ["0.0.0.0", "this-host"],
    ["192.0.0.9", null],
    ["192.0.0.10", null],
    ["192.0.0.8", "ipv4-dummy-address"],
    ["192.0.0.11", "ietf-protocol-assignments"],
    ["192.0.2.1", "documentation"],
    ["198.51.100.1", "documentation"],
    ["203.0.113.1", "documentation"],
    ["198.18.0.1", "benchmarking"],
    ["192.88.99.1", null],
    ["192.88.99.2", "6a44-relay-anycast"],
    ["192.88.99.3", null],
    ["192.0.0.1", "ipv4-service-continuity"],
    ["192.0.0.170", "nat64-dns64-discovery"],
    ["192.31.196.1", null],
    ["192.52.193.1", null],
    ["192.175.48.1", null],
    ["198.19.255.255", "benchmarking"],
    ["198.20.0.0", null],
    ["100.127.255.255", "shared-address-space"],
    ["100.128.0.0", null],
    ["223.255.255.255", null],
    ["224.0.0.1", "multicast"],
    ["239.255.255.255", "multicast"],
    ["240.0.0.1", "reserved"],
    ["255.255.255.255", "limited-broadcast"],
    ["2606:4700:4700::1111", null],
    ["2001:4860:4860::8888", null],
    ["2001:db8::1", "documentation"],
    ["3fff::1", "documentation"],
    ["fe80::1", "link-local"],
    ["fc00::1", "unique-local"],
    ["fd12:3456::1", "unique-local"],
    ["ff02::1", "multicast"],
    ["5f00::1", "segment-routing-sids"],
    ["64:ff9b::1.2.3.4", "ipv4-ipv6-translation"],
    ["64:ff9b:1::1", "ipv4-ipv6-translation"],
    ["2002::1", null],
    ["2001::1", "teredo"],
    ["2001:1::1", null],
    ["2001:1::4", "ietf-protocol-assignments"],
    ["2001:2::1", "benchmarking"],
    ["2001:3::1", null],
    ["2001:4:112::1", null],
    ["2001:20::1", null],
    ["2001:200::1", null],
    ["2001:1::3", null],
    ["2001:10::1", "orchid"],
    ["2001:30::1", null],
    ["2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", "ietf-protocol-assignments"],
    ["2620:4f:8000::1", null],
    ["100:0:0:1::1", "dummy-prefix"],
    ["64:ff9b::8.8.8.8", "ipv4-ipv6-translation"],
    ["fec0::1", "reserved"],
    ["1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "reserved"],
    ["2000::", null],
    ["3fff:1000::", null],
    ["3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", "documentation"],
    ["::1", "loopback"],
    ["::", "unspecified"],
    ["100::1", "discard-only"],
    ["1::1", "reserved"],
    ["4000::1", "reserved"],
    ["::ffff:10.1.1.1", "private-use"],
    ["::ffff:1.1.1.1", null],
    ["::8.8.8.8", "reserved"],
  ])("%s → %p", (text, reason) => {
    const result = checkAddress(text);
    if (reason === null) expect(result.ok).toBe(true);
    else expect(result).toEqual({ ok: false, code: "address_not_public", reason });
    expect(publicAddress(text)).toEqual(result.ok ? result.address : null);
  });

  test("an invalid text is invalid_address, never classified", () => {
    expect(checkAddress("127.1")).toEqual({ ok: false, code: "invalid_address" });
    expect(checkAddress("010.1.1.1")).toEqual({ ok: false, code: "invalid_address" });
    expect(publicAddress("127.1")).toBeNull();
  });
});

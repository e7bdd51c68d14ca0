import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { CidrSet } from "../../src/address/cidr-set.ts";
import { cidrContains, parseCidr, type Cidr } from "../../src/address/cidr.ts";
import { parseAddress } from "../../src/address/parse.ts";

const blocks = (...texts: string[]): Cidr[] => texts.map((text) => parseCidr(text)!);
const address = (text: string) => parseAddress(text)!;

describe("CidrSet", () => {
  test("holds the addresses of its blocks and no other", () => {
    const set = new CidrSet(blocks("198.51.100.0/24", "10.0.0.0/8", "2001:db8::/32", "192.0.2.7"));
    expect(set.has(address("198.51.100.255"))).toBe(true);
    expect(set.has(address("198.51.101.0"))).toBe(false);
    expect(set.has(address("10.255.255.255"))).toBe(true);
    expect(set.has(address("11.0.0.0"))).toBe(false);
    expect(set.has(address("192.0.2.7"))).toBe(true);
    expect(set.has(address("192.0.2.6"))).toBe(false);
    expect(set.has(address("2001:db8:ffff::1"))).toBe(true);
    expect(set.has(address("2001:db9::1"))).toBe(false);
  });

  test("a /0 holds every address of its family, and families never match each other", () => {
    const v4 = new CidrSet(blocks("0.0.0.0/0"));
    expect(v4.has(address("255.255.255.255"))).toBe(true);
    expect(v4.has(address("::1"))).toBe(false);
    const v6 = new CidrSet(blocks("::/0"));
    expect(v6.has(address("::1"))).toBe(true);
    expect(v6.has(address("1.2.3.4"))).toBe(false);
    expect(new CidrSet([]).has(address("1.2.3.4"))).toBe(false);
  });

  test("answers as cidrContains over the list, for any blocks and address", () => {
    const v4 = fc.tuple(fc.nat(0xffffffff), fc.integer({ min: 0, max: 32 })).map(([value, prefix]) => `${[24, 16, 8, 0].map((shift) => (value >>> shift) & 255).join(".")}/${prefix}`);
    const v6 = fc.ipV6().chain((text) => fc.integer({ min: 0, max: 128 }).map((prefix) => `${text}/${prefix}`));
    // Addresses near the blocks' networks as well as anywhere, so both answers are common.
    fc.assert(
      fc.property(fc.array(fc.oneof(v4, v6), { maxLength: 8 }), fc.oneof(fc.ipV4(), fc.ipV6()), fc.nat(7), (texts, anywhere, pick) => {
        const cidrs = texts.flatMap((text) => parseCidr(text) ?? []);
        const near = cidrs[pick % Math.max(cidrs.length, 1)]?.network.text;
        for (const text of near ? [anywhere, near] : [anywhere]) {
          const probe = parseAddress(text);
          if (!probe) continue;
          expect(new CidrSet(cidrs).has(probe)).toBe(cidrs.some((cidr) => cidrContains(cidr, probe)));
        }
      }),
      { numRuns: 2000 },
    );
  });
});

import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import type { Address } from "../../src/address/address.ts";
import { cidrContains, network128, network32 } from "../../src/address/cidr.ts";
import { ipv4Text, ipv6Text, parseAddress } from "../../src/address/parse.ts";

/** An address's network at a prefix: the first bits kept, the rest zero (the network a lookup answers with). */
describe("network32 and network128", () => {
  test.each([
    ["203.0.113.77", 24, "203.0.113.0"],
    ["203.0.113.77", 0, "0.0.0.0"],
    ["203.0.113.77", 32, "203.0.113.77"],
    ["255.255.255.255", 1, "128.0.0.0"],
    ["10.200.3.4", 9, "10.128.0.0"],
  ] as const)("%s at /%d is %s", (text, prefix, network) => {
    expect(ipv4Text(network32((parseAddress(text) as Address & { version: 4 }).value, prefix))).toBe(network);
  });

  test.each([
    ["2001:db8:1234:5678::1", 48, "2001:db8:1234::"],
    ["2001:db8:1234:5678::1", 0, "::"],
    ["2001:db8:1234:5678::1", 128, "2001:db8:1234:5678::1"],
    ["2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", 33, "2001:db8:8000::"],
    ["2001:db8::ffff:1", 112, "2001:db8::ffff:0"],
  ] as const)("%s at /%d is %s", (text, prefix, network) => {
    expect(ipv6Text(network128((parseAddress(text) as Address & { version: 6 }).words, prefix))).toBe(network);
  });

  test("the network holds the address, and only its first bits are set", () => {
    const word = fc.integer({ min: 0, max: 0xffffffff });
    fc.assert(
      fc.property(word, fc.integer({ min: 0, max: 32 }), (value, prefix) => {
        const network = network32(value, prefix);
        const address = parseAddress(ipv4Text(value))!;
        expect(cidrContains({ network: parseAddress(ipv4Text(network))!, prefix }, address)).toBe(true);
        if (prefix < 32) expect(network % 2 ** (32 - prefix)).toBe(0);
      }),
    );
    fc.assert(
      fc.property(fc.tuple(word, word, word, word), fc.integer({ min: 0, max: 128 }), (words, prefix) => {
        const network = network128(words, prefix);
        const address = parseAddress(ipv6Text(words))!;
        expect(cidrContains({ network: parseAddress(ipv6Text(network))!, prefix }, address)).toBe(true);
        const host = network.reduce((bits, w) => (bits << 32n) | BigInt(w), 0n) & ((1n << BigInt(128 - prefix)) - 1n);
        expect(host).toBe(0n);
      }),
    );
  });
});

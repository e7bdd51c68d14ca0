import { describe, expect, test } from "bun:test";
import { parseAddress } from "../../src/address/parse.ts";
import { cidrContains, parseCidr } from "../../src/address/cidr.ts";

describe("parseCidr and IPv4-mapped IPv6 text", () => {
  test("from /96 on, a mapped block is the IPv4 block it carries", () => {
    expect(parseCidr("::ffff:0:0/96")).toEqual({ network: parseAddress("0.0.0.0")!, prefix: 0 });
    expect(parseCidr("::ffff:1.1.1.0/120")).toEqual({ network: parseAddress("1.1.1.0")!, prefix: 24 });
    expect(parseCidr("::ffff:1.1.1.1/128")).toEqual({ network: parseAddress("1.1.1.1")!, prefix: 32 });
    expect(parseCidr("::ffff:0:0/129")).toBeNull();
  });

  test("under /96, the text is an IPv6 block with host bits set, the same block as its network's text", () => {
    for (const [text, network] of [
      ["::ffff:0:0/95", "::fffe:0:0/95"],
      ["::ffff:1.2.3.4/64", "::/64"],
      ["::FFFF:0:0/80", "::/80"],
      ["::ffff:0:0/0", "::/0"],
    ] as const) {
      const cidr = parseCidr(text);
      expect({ text, version: cidr?.network.version, prefix: cidr?.prefix }).toEqual({ text, version: 6, prefix: parseCidr(network)!.prefix });
      for (const address of ["::fffe:0:1", "::fffe:ffff:ffff", "::1", "::fffd:ffff:ffff", "2001:db8::1"]) {
        const parsed = parseAddress(address)!;
        expect({ text, address, contains: cidrContains(cidr!, parsed) }).toEqual({ text, address, contains: cidrContains(parseCidr(network)!, parsed) });
      }
    }
  });
});

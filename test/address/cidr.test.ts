import { describe, expect, test } from "bun:test";
import { parseAddress } from "../../src/address/parse.ts";
import { isShortMappedPrefix, parseCidr } from "../../src/address/cidr.ts";

describe("parseCidr and IPv4-mapped IPv6 text", () => {
  test("from /96 on, a mapped block is the IPv4 block it carries", () => {
    expect(parseCidr("::ffff:0:0/96")).toEqual({ network: parseAddress("0.0.0.0")!, prefix: 0 });
    expect(parseCidr("::ffff:1.1.1.0/120")).toEqual({ network: parseAddress("1.1.1.0")!, prefix: 24 });
    expect(parseCidr("::ffff:1.1.1.1/128")).toEqual({ network: parseAddress("1.1.1.1")!, prefix: 32 });
    expect(parseCidr("::ffff:0:0/129")).toBeNull();
  });

  test("under /96, a mapped address is no block: refused, and told apart from other refusals", () => {
    for (const text of ["::ffff:0:0/95", "::ffff:1.2.3.4/64", "::FFFF:0:0/80", "::ffff:0:0/0", "::ffff:10.0.0.1/80"]) {
      expect({ text, cidr: parseCidr(text) }).toEqual({ text, cidr: null });
      expect({ text, short: isShortMappedPrefix(text) }).toEqual({ text, short: true });
    }
    for (const text of ["::ffff:0:0/96", "::ffff:0:0/129", "10.0.0.0/95", "::/64", "2001:db8::/95", "::ffff:0:0", "nonsense/8"]) {
      expect({ text, short: isShortMappedPrefix(text) }).toEqual({ text, short: false });
    }
  });
});

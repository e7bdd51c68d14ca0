import { describe, expect, test } from "bun:test";
import { parseCidr, type Cidr } from "../../src/address/cidr.ts";
import { parseAddress } from "../../src/address/parse.ts";
import { clientAddress } from "../../src/http/client-address.ts";

const cidrs = (...texts: string[]): Cidr[] => texts.map((text) => parseCidr(text)!);

describe("clientAddress", () => {
  const cases: Array<[string, string, string | null, Cidr[], string]> = [
    ["no trusted proxies: the peer", "203.0.113.7", "1.2.3.4", [], "203.0.113.7"],
    ["untrusted peer with a forged header", "198.51.100.9", "1.2.3.4", cidrs("10.0.0.0/8"), "198.51.100.9"],
    ["trusted peer, one hop", "10.0.0.2", "1.2.3.4", cidrs("10.0.0.0/8"), "1.2.3.4"],
    ["trusted peer, no header", "10.0.0.2", null, cidrs("10.0.0.0/8"), "10.0.0.2"],
    ["trusted peer, empty header", "10.0.0.2", "", cidrs("10.0.0.0/8"), "10.0.0.2"],
    ["right-most untrusted hop wins over a spoofed left part", "10.0.0.2", "6.6.6.6, 1.2.3.4", cidrs("10.0.0.0/8"), "1.2.3.4"],
    ["trusted hops are skipped", "10.0.0.2", "6.6.6.6, 1.2.3.4, 10.1.1.1, 10.2.2.2", cidrs("10.0.0.0/8"), "1.2.3.4"],
    ["all hops trusted: the left-most", "10.0.0.2", "10.9.9.9, 10.1.1.1", cidrs("10.0.0.0/8"), "10.9.9.9"],
    ["garbage hop stops at the last trusted one", "10.0.0.2", "1.2.3.4, not-an-ip, 10.1.1.1", cidrs("10.0.0.0/8"), "10.1.1.1"],
    ["garbage right after the peer: the peer", "10.0.0.2", "1.2.3.4, example.com", cidrs("10.0.0.0/8"), "10.0.0.2"],
    ["legacy form is not an address", "10.0.0.2", "1.2.3.4, 127.1", cidrs("10.0.0.0/8"), "10.0.0.2"],
    ["ipv6 peer trusted", "fd00::1", "2001:db8::5", cidrs("fd00::/8"), "2001:db8::5"],
    ["ipv6 peer untrusted", "2001:db8::1", "1.2.3.4", cidrs("fd00::/8"), "2001:db8::1"],
    ["mapped hop is its IPv4 address", "10.0.0.2", "::ffff:1.2.3.4", cidrs("10.0.0.0/8"), "1.2.3.4"],
    ["single trusted address", "127.0.0.1", "9.9.9.9", cidrs("127.0.0.1"), "9.9.9.9"],
    ["empty list elements are no hops (RFC 9110 §5.6.1)", "10.0.0.2", "1.2.3.4,,", cidrs("10.0.0.0/8"), "1.2.3.4"],
    ["empty elements between hops", "10.0.0.2", "6.6.6.6, , 1.2.3.4 ,, 10.1.1.1", cidrs("10.0.0.0/8"), "1.2.3.4"],
    ["only empty elements: the peer", "10.0.0.2", " , ,", cidrs("10.0.0.0/8"), "10.0.0.2"],
  ];
  for (const [name, peer, header, trusted, expected] of cases) {
    test(name, () => {
      expect(clientAddress(parseAddress(peer)!, header, trusted).text).toBe(expected);
    });
  }
});

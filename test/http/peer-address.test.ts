import { expect, test } from "bun:test";
import { lastPeer, peerAddress } from "../../src/http/server.ts";

test("a peer's address is read as the contract reads it: IPv4-mapped IPv6 as the IPv4 it carries", () => {
  for (const [text, expected, version] of [
    ["192.0.2.1", "192.0.2.1", 4],
    ["::ffff:192.0.2.1", "192.0.2.1", 4],
    ["2001:db8::1", "2001:db8::1", 6],
    ["2001:DB8:0:0:0:0:0:1", "2001:db8::1", 6],
    ["::ffff:c000:201", "192.0.2.1", 4],
  ] as const) {
    expect(peerAddress(text)).toMatchObject({ text: expected, version });
  }
  expect(peerAddress("not an address")).toBeNull();
});

test("the last peer is kept: the same text gives the same address, another text its own", () => {
  const peers = lastPeer();
  const first = peers("192.0.2.1");
  expect(peers("192.0.2.1")).toBe(first);
  expect(peers("::ffff:198.51.100.7")).toMatchObject({ text: "198.51.100.7", version: 4 });
  expect(peers("2001:db8::5")).toMatchObject({ text: "2001:db8::5", version: 6 });
  expect(peers("192.0.2.1")).toEqual(first);
  expect(peers("garbage")).toBeNull();
  expect(peers("garbage")).toBeNull();
  expect(peers("203.0.113.9")).toMatchObject({ text: "203.0.113.9" });
});

import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { dataSet, fixture, fixtureDir, privacy, source } from "./support.ts";

const dir = fixtureDir("lists");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Tor's bulk exit list: one address a line. Here with what plain lists may also hold:
// comments, CIDR blocks, IPv6, blank lines, entries that overlap, CRLF.
const TOR = ["# Tor exits", "185.220.101.1", "185.220.101.2", "", "185.220.101.0/30   # the same block again, wider", "185.220.101.2", "2001:67c:e60:c0c::/64\r", "2001:67c:e60:c0c:192:42:116:16"].join("\n");

// Apple's Private Relay egress list is an RFC 8805 geofeed.
const GEOFEED = ["# ip_prefix,alpha2code,region,city,postal_code", "172.224.224.0/31,GB,GB-EN,London,", "172.224.224.2/31,GB,GB-EN,London,", "2a02:26f7:b3c0:4000::/64,DE,DE-BE,Berlin,", "104.28.0.8/29,US,US-CA,,"].join("\n");

describe("a plain list (--signal tor)", () => {
  test("each address or block is tor, overlapping entries one block; network at every edge", async () => {
    const { look } = await dataSet(dir, [source(fixture(dir, "torbulkexitlist", TOR), { signal: "tor" })]);
    const tor = privacy({ tor: true });
    const notTor = privacy({ tor: false });
    const at = (ip: string) => ({ network: look(ip).network, privacy: look(ip).privacy });
    expect(at("185.220.100.255")).toEqual({ network: null, privacy: notTor });
    expect(at("185.220.101.0")).toEqual({ network: "185.220.101.0/30", privacy: tor });
    expect(at("185.220.101.3")).toEqual({ network: "185.220.101.0/30", privacy: tor });
    expect(at("185.220.101.4")).toEqual({ network: null, privacy: notTor });
    expect(at("2001:67c:e60:c0c:ffff:ffff:ffff:ffff")).toEqual({ network: "2001:67c:e60:c0c::/64", privacy: tor });
    expect(at("2001:67c:e60:c0d::")).toEqual({ network: null, privacy: notTor });
    expect(look("185.220.101.1").found).toBe(true);
  });

  test("--signal hosting --service names the provider (Cloudflare's ips-v4, no newline at the end)", async () => {
    const { look, index } = await dataSet(dir, [source(fixture(dir, "ips-v4", "173.245.48.0/20\n103.21.244.0/22"), { signal: "hosting", service: "Cloudflare" })]);
    expect(look("173.245.63.255").privacy).toEqual(privacy({ hosting: true }, "Cloudflare"));
    expect(look("173.245.64.0").privacy).toEqual(privacy({ hosting: false }));
    expect(look("103.21.247.1").network).toBe("103.21.244.0/22");
    expect(index.info.sources[0]).toMatchObject({ name: "Address list", format: "address-list", signal: "hosting", rowsV4: 2, rangesV4: 2 });
  });
});

test("a list whose first entry has a comment with a comma in it is told a list by its content", async () => {
  const { look, index } = await dataSet(dir, [source(fixture(dir, "commented-exits", "185.220.101.1 # exits, old\n185.220.101.2 # new\n"), { signal: "tor" })]);
  expect(index.info.sources[0]).toMatchObject({ format: "address-list", signal: "tor" });
  expect(look("185.220.101.1")).toMatchObject({ network: "185.220.101.1/32", privacy: privacy({ tor: true }) });
});

describe("two files of one list source (FILE + FILE)", () => {
  test("Cloudflare's ips-v4 and ips-v6 as one hosting source", async () => {
    const v4 = fixture(dir, "cf-ips-v4", "173.245.48.0/20\n104.16.0.0/13\n");
    const v6 = fixture(dir, "cf-ips-v6", "2606:4700::/32\n");
    const { look, index } = await dataSet(dir, [{ files: [{ path: v4 }, { path: v6 }], feed: { signal: "hosting", service: "Cloudflare" } }]);
    expect(look("104.16.0.1")).toMatchObject({ network: "104.16.0.0/13", privacy: privacy({ hosting: true }, "Cloudflare") });
    expect(look("2606:4700:4700::1111")).toMatchObject({ network: "2606:4700::/32", privacy: privacy({ hosting: true }, "Cloudflare") });
    expect(look("2606:4701::1")).toMatchObject({ found: false, privacy: privacy({ hosting: false }) });
    expect(index.info.sources).toHaveLength(1);
    expect(index.info.sources[0]).toMatchObject({ signal: "hosting", rowsV4: 2, rowsV6: 1 });
  });
});

describe("an RFC 8805 geofeed (--signal relay --service NAME)", () => {
  test("each prefix is relay with the service, the locations are not read; network at every edge", async () => {
    const { look } = await dataSet(dir, [source(fixture(dir, "egress-ip-ranges.csv", GEOFEED), { signal: "relay", service: "iCloud Private Relay" })]);
    const relay = privacy({ relay: true }, "iCloud Private Relay");
    const at = (ip: string) => ({ found: look(ip).found, network: look(ip).network, privacy: look(ip).privacy });
    // Two neighbouring /31s with the same answer are one block.
    expect(at("172.224.224.0")).toEqual({ found: true, network: "172.224.224.0/30", privacy: relay });
    expect(at("172.224.224.3")).toEqual({ found: true, network: "172.224.224.0/30", privacy: relay });
    expect(at("172.224.224.4")).toEqual({ found: false, network: null, privacy: privacy({ relay: false }) });
    expect(at("104.28.0.15")).toEqual({ found: true, network: "104.28.0.8/29", privacy: relay });
    expect(at("104.28.0.16").found).toBe(false);
    expect(at("2a02:26f7:b3c0:4000::1")).toEqual({ found: true, network: "2a02:26f7:b3c0:4000::/64", privacy: relay });
    expect(look("172.224.224.1").country_code).toBeNull();
  });
});

describe("the true / false / null rule across sources", () => {
  const asnCsv = "185.220.100.0,185.220.103.255,60729,Stiftung Erneuerbare Freiheit\n172.224.0.0,172.224.255.255,36183,Akamai Technologies\n3.5.0.0,3.5.255.255,14618,Amazon.com\n";
  const aws = JSON.stringify({ syncToken: "1", createDate: "2026-11-24-22-13-08", prefixes: [{ ip_prefix: "3.5.0.0/16", region: "us-east-1", service: "EC2", network_border_group: "us-east-1" }], ipv6_prefixes: [] });

  test("true where a source of the signal covers the address, false where the data has one and none does, null without one", async () => {
    const { look } = await dataSet(dir, [
      source(fixture(dir, "rule-ip-ranges.json", aws)),
      source(fixture(dir, "rule-tor", TOR), { signal: "tor" }),
      source(fixture(dir, "rule-geofeed.csv", GEOFEED), { signal: "relay", service: "iCloud Private Relay" }),
      source(fixture(dir, "rule-asn.csv", asnCsv)),
    ]);
    // No vpn or proxy source: null everywhere, never a guess.
    expect(look("185.220.101.1")).toMatchObject({ asn: 60729, privacy: { hosting: false, tor: true, vpn: null, relay: false, proxy: null, service: null } });
    expect(look("185.220.101.4")).toMatchObject({ asn: 60729, network: "185.220.101.4/30", privacy: { hosting: false, tor: false, vpn: null, relay: false, proxy: null, service: null } });
    expect(look("172.224.224.1")).toMatchObject({ asn: 36183, privacy: { hosting: false, tor: false, vpn: null, relay: true, proxy: null, service: "iCloud Private Relay" } });
    expect(look("3.5.0.1")).toMatchObject({ asn: 14618, network: "3.5.0.0/16", privacy: { hosting: true, tor: false, vpn: null, relay: false, proxy: null, service: "Amazon EC2 (us-east-1)" } });
    // Covered by nothing at all: not found, and still the rule's false and null.
    expect(look("9.9.9.9")).toMatchObject({ found: false, network: null, asn: null, privacy: { hosting: false, tor: false, vpn: null, relay: false, proxy: null, service: null } });
    // A feed's block inside an AS's range splits the range: network never crosses a signal's edge.
    expect(look("185.220.100.0").network).toBe("185.220.100.0/24");
    expect(look("185.220.102.0").network).toBe("185.220.102.0/23");
  });

  test("two sources of one signal: covered by either is true; the first hosting or relay source names the service", async () => {
    const relayList = fixture(dir, "relay-list", "172.224.224.0/24\n198.51.100.0/24\n");
    const { look } = await dataSet(dir, [
      source(fixture(dir, "first-geofeed.csv", GEOFEED), { signal: "relay", service: "iCloud Private Relay" }),
      source(relayList, { signal: "relay", service: "Other Relay" }),
      source(fixture(dir, "vpn-list", "172.224.224.0/31\n"), { signal: "vpn" }),
    ]);
    expect(look("172.224.224.1").privacy).toEqual(privacy({ relay: true, vpn: true }, "iCloud Private Relay"));
    expect(look("172.224.224.2").privacy).toEqual(privacy({ relay: true, vpn: false }, "iCloud Private Relay"));
    expect(look("172.224.224.9").privacy).toEqual(privacy({ relay: true, vpn: false }, "Other Relay"));
    expect(look("172.224.224.1").network).toBe("172.224.224.0/31");
    expect(look("172.224.224.9").network).toBe("172.224.224.8/29");
  });

  test("two lists of one signal that overlap in part answer alike: network does not stop at either list's edge", async () => {
    const { look } = await dataSet(dir, [
      source(fixture(dir, "tor-a", "45.1.0.0/25\n"), { signal: "tor" }),
      source(fixture(dir, "tor-b", "45.1.0.64/26\n45.1.0.128/25\n"), { signal: "tor" }),
    ]);
    for (const ip of ["45.1.0.0", "45.1.0.64", "45.1.0.100", "45.1.0.255"]) expect(look(ip)).toMatchObject({ network: "45.1.0.0/24", privacy: privacy({ tor: true }) });
    expect(look("45.1.1.0")).toMatchObject({ found: false, privacy: privacy({ tor: false }) });
  });

  test("a tor, vpn or proxy source names no service", async () => {
    const { look } = await dataSet(dir, [source(fixture(dir, "proxy-list", "45.0.0.0/24\n"), { signal: "proxy" })]);
    expect(look("45.0.0.1").privacy).toEqual(privacy({ proxy: true }));
    expect(look("1.1.1.1").privacy).toEqual(privacy({ proxy: false }));
  });
});

import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { buildDataSet } from "../../../src/importer/build.ts";
import { readFeedPacked } from "../../../src/importer/feeds/read-feed.ts";
import type { FeedOptions } from "../../../src/importer/source.ts";
import { fixture, fixtureDir, source } from "./support.ts";

const dir = fixtureDir("refused");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const aws = (prefix: string) =>
  JSON.stringify(
    {
      syncToken: "1",
      createDate: "2026-11-24-22-13-08",
      prefixes: [
        { ip_prefix: "3.5.0.0/16", region: "us-east-1", service: "EC2", network_border_group: "us-east-1" },
        { ip_prefix: prefix, region: "us-east-1", service: "EC2", network_border_group: "us-east-1" },
      ],
      ipv6_prefixes: [],
    },
    null,
    2,
  );

// Each malformed file is refused with an error naming the file and the line at fault.
test.each<[string, string, string, FeedOptions | undefined, RegExp]>([
  ["an address list with a bad address", "tor-bad", "185.220.101.1\n# fine\n185.220.101.400\n", { signal: "tor" }, /tor-bad:3: "185\.220\.101\.400" is not an IP address or a CIDR block/],
  ["an address list with a bad prefix length", "vpn-bad", "10.0.0.0/8\n2001:db8::/129\n", { signal: "vpn" }, /vpn-bad:2: "2001:db8::\/129" is not an IP address or a CIDR block/],
  ["a geofeed with a bad prefix", "geo-bad.csv", "# comment\n172.224.224.0/31,GB,,,\n172.224.224.0/33,GB,,,\n", { signal: "relay", service: "Relay" }, /geo-bad\.csv:3: "172\.224\.224\.0\/33" is not an IP address or a CIDR block/],
  ["a geofeed line with too many fields", "geo-wide.csv", "172.224.224.0/31,GB,,,\n172.224.224.2/31,GB,,,,extra\n", { signal: "relay", service: "Relay" }, /geo-wide\.csv:2: a geofeed line has at most 5 fields/],
  ["an AWS file with a bad prefix", "ip-ranges-bad.json", aws("3.5.300.0/24"), undefined, /ip-ranges-bad\.json:12: "3\.5\.300\.0\/24" is not an IP address or a CIDR block \(prefixes\[1\]\.ip_prefix\)/],
  ["an AWS file cut short", "ip-ranges-cut.json", aws("3.6.0.0/16").slice(0, 200), { signal: "hosting" }, /ip-ranges-cut\.json: not a valid AWS ip-ranges\.json \(the JSON cannot be read/],
])("%s", async (_, name, content, feed, message) => {
  const path = fixture(dir, name, content);
  await expect(buildDataSet([source(path, feed)], new Date())).rejects.toThrow(message);
});

test("a list or geofeed without --signal, and options a feed does not take, are refused naming the file", async () => {
  const list = fixture(dir, "list", "1.2.3.4\n");
  await expect(buildDataSet([source(list)], new Date())).rejects.toThrow(/list: a list of addresses does not say what they are: name it with --signal tor\|vpn\|proxy\|hosting\|relay/);
  await expect(buildDataSet([source(list, { signal: "tor", service: "X" })], new Date())).rejects.toThrow("list: --service names the provider of hosting or relay addresses; a tor list has none");
  const geofeed = fixture(dir, "geofeed.csv", "1.2.3.0/24,US,,,\n");
  await expect(buildDataSet([source(geofeed, { signal: "relay" })], new Date())).rejects.toThrow(/geofeed\.csv: a geofeed says where its addresses are, not what they are: name that with --signal hosting\|relay --service NAME/);
  await expect(buildDataSet([source(geofeed, { signal: "tor", service: "X" })], new Date())).rejects.toThrow(/--signal hosting\|relay --service NAME/);
  const json = fixture(dir, "ip-ranges.json", aws("3.6.0.0/16"));
  await expect(buildDataSet([source(json, { signal: "tor" })], new Date())).rejects.toThrow("ip-ranges.json: AWS ip-ranges.json lists hosting addresses; --signal tor does not apply to it");
  await expect(buildDataSet([source(json, { service: "Mine" })], new Date())).rejects.toThrow("AWS ip-ranges.json names its own services; --service does not apply to it");
  const csv = fixture(dir, "country.csv", "1.0.0.0,1.0.0.255,AU\n");
  await expect(buildDataSet([source(csv, { signal: "tor" })], new Date())).rejects.toThrow("country.csv: --signal and --service describe a feed of addresses");
});

test("a list with only comments lists no addresses: refused, not read as an empty signal source", async () => {
  const emptied = fixture(dir, "emptied", "# none today\n");
  await expect(buildDataSet([source(emptied, { signal: "tor" })], new Date())).rejects.toThrow(/emptied: cannot tell the format/);
  await expect(buildDataSet([{ files: [{ path: emptied, format: "address-list" }], feed: { signal: "tor" } }], new Date())).rejects.toThrow("emptied: the feed lists no addresses");
});

test("a hostile list: a line past 65,536 characters is refused naming its line, and a long bad entry is quoted short", async () => {
  const long = fixture(dir, "long-line", `185.220.101.1\n${"1".repeat(70_000)}\n`);
  await expect(buildDataSet([source(long, { signal: "tor" })], new Date())).rejects.toThrow(/long-line:2: the line is longer than 65,536 characters/);
  const wide = fixture(dir, "wide-entry", `185.220.101.1\n${"x".repeat(60_000)}\n`);
  const error = (await buildDataSet([source(wide, { signal: "tor" })], new Date()).catch((caught: Error) => caught)) as Error;
  expect(error.message).toMatch(/wide-entry:2: "x{80}"… is not an IP address or a CIDR block/);
  expect(error.message.length).toBeLessThan(400);
});

test("a feed larger than the bound is refused before it is parsed", () => {
  const list = new TextEncoder().encode("185.220.101.1\n".repeat(10)); // 140 bytes
  expect(readFeedPacked(list, { format: "address-list", file: "exits", feed: { signal: "tor" }, maxBytes: 140 })[4].length).toBe(1);
  expect(() => readFeedPacked(list, { format: "address-list", file: "exits", feed: { signal: "tor" }, maxBytes: 139 })).toThrow("exits: 140 bytes is larger than any feed of addresses (at most 139)");
});

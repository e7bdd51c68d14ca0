import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { buildDataSet } from "../../../src/importer/build.ts";
import type { FeedOptions } from "../../../src/importer/source.ts";
import { dataSet, fixture, fixtureDir, privacy, source } from "./support.ts";

// Blocks that would change answers far beyond what a feed meant are refused, naming the
// file, the line and (in JSON) the entry: host bits set (a typo), an IPv4-mapped IPv6
// block, a block larger than a /8 or a /16, a block of the wrong family where a feed
// lists one family.

const dir = fixtureDir("mistakes");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
async function refusal(content: string, feed: FeedOptions | undefined, name = `feed-${++files}`): Promise<string> {
  const path = fixture(dir, name, content);
  const error = (await buildDataSet([source(path, feed)], new Date()).then(
    () => null,
    (caught: Error) => caught,
  )) as Error | null;
  expect(error).not.toBeNull();
  return (error as Error).message.slice(dir.length + 1);
}

const aws = (prefixes: string[], ipv6: string[] = []) =>
  JSON.stringify(
    {
      syncToken: "1",
      createDate: "2026-11-24-22-13-08",
      prefixes: prefixes.map((ip_prefix) => ({ ip_prefix, region: "us-east-1", service: "EC2", network_border_group: "us-east-1" })),
      ipv6_prefixes: ipv6.map((ipv6_prefix) => ({ ipv6_prefix, region: "us-east-1", service: "EC2", network_border_group: "us-east-1" })),
    },
    null,
    2,
  );
const azure = (prefixes: string[]) => JSON.stringify({ changeNumber: 1, cloud: "Public", values: [{ name: "AzureCloud", id: "AzureCloud", properties: { region: "", systemService: "", addressPrefixes: prefixes } }] }, null, 2);
const oracle = (cidrs: string[]) => JSON.stringify({ last_updated_timestamp: "2026-11-20T10:00:00", regions: [{ region: "us-phoenix-1", cidrs: cidrs.map((cidr) => ({ cidr, tags: ["OCI"] })) }] }, null, 2);
const google = (prefixes: object[]) => JSON.stringify({ syncToken: "1", creationTime: "2026-11-24T23:00:00.000000", prefixes }, null, 2);
const tor: FeedOptions = { signal: "tor" };
const relay: FeedOptions = { signal: "relay", service: "Relay" };

describe("host bits set", () => {
  test("are refused in every feed, naming the line (and the entry) and the block of that prefix", async () => {
    expect(await refusal("185.220.101.1\n1.2.3.4/8\n", tor, "tor-typo")).toBe('tor-typo:2: "1.2.3.4/8" has host bits set: the block of that prefix is 1.0.0.0/8');
    expect(await refusal("2001:db8::1/64\n", tor, "tor-v6")).toBe('tor-v6:1: "2001:db8::1/64" has host bits set: the block of that prefix is 2001:db8::/64');
    expect(await refusal("# egress\n172.224.224.1/31,GB,,,\n", relay, "egress.csv")).toBe('egress.csv:2: "172.224.224.1/31" has host bits set: the block of that prefix is 172.224.224.0/31');
    expect(await refusal(aws(["3.5.0.0/16", "3.5.16.1/20"]), undefined, "ip-ranges.json")).toBe('ip-ranges.json:12: prefixes[1].ip_prefix "3.5.16.1/20" has host bits set: the block of that prefix is 3.5.16.0/20');
    expect(await refusal(azure(["20.0.0.0/8", "20.1.2.3/16"]), undefined, "ServiceTags_Public.json")).toBe(
      'ServiceTags_Public.json:13: values[0].properties.addressPrefixes[1] "20.1.2.3/16" has host bits set: the block of that prefix is 20.1.0.0/16',
    );
    expect(await refusal(oracle(["129.146.0.1/21"]), undefined, "public_ip_ranges.json")).toBe(
      'public_ip_ranges.json:8: regions[0].cidrs[0].cidr "129.146.0.1/21" has host bits set: the block of that prefix is 129.146.0.0/21',
    );
    expect(await refusal(google([{ ipv6Prefix: "2600:1900:4001::/44", service: "Google Cloud", scope: "us-east1" }]), undefined, "cloud.json")).toBe(
      'cloud.json:6: prefixes[0].ipv6Prefix "2600:1900:4001::/44" has host bits set: the block of that prefix is 2600:1900:4000::/44',
    );
  });

  test("an address without a prefix is its own block, /32 or /128, as before", async () => {
    const { look } = await dataSet(dir, [source(fixture(dir, "plain-addresses", "185.220.101.1\n2001:67c:e60:c0c:192:42:116:16\n"), tor)]);
    expect(look("185.220.101.1")).toMatchObject({ network: "185.220.101.1/32", privacy: privacy({ tor: true }) });
    expect(look("2001:67c:e60:c0c:192:42:116:16")).toMatchObject({ network: "2001:67c:e60:c0c:192:42:116:16/128", privacy: privacy({ tor: true }) });
  });
});

describe("IPv4-mapped IPv6 blocks", () => {
  test("are refused in every feed (::ffff:0:0/96 would be every IPv4 address)", async () => {
    expect(await refusal(aws(["3.5.0.0/16"], ["2600:1f18::/33", "::ffff:0:0/96"]), undefined, "mapped-ip-ranges.json")).toBe(
      'mapped-ip-ranges.json:20: ipv6_prefixes[1].ipv6_prefix "::ffff:0:0/96" is an IPv4-mapped IPv6 block: a feed lists IPv4 blocks as IPv4 (0.0.0.0/0), and a mapped one is taken for a mistake',
    );
    expect(await refusal("::ffff:185.220.101.0/120\n", tor, "tor-mapped")).toBe(
      'tor-mapped:1: "::ffff:185.220.101.0/120" is an IPv4-mapped IPv6 block: a feed lists IPv4 blocks as IPv4 (185.220.101.0/24), and a mapped one is taken for a mistake',
    );
    expect(await refusal("::ffff:172.224.224.0/127,GB,,,\n", relay, "mapped.csv")).toMatch(/^mapped\.csv:1: "::ffff:172\.224\.224\.0\/127" is an IPv4-mapped IPv6 block/);
    expect(await refusal(azure(["::ffff:20.0.0.0/104"]), undefined, "mapped-tags.json")).toMatch(/values\[0\]\.properties\.addressPrefixes\[0\] "::ffff:20\.0\.0\.0\/104" is an IPv4-mapped IPv6 block/);
  });

  test("a list's single IPv4-mapped address is still its IPv4 address", async () => {
    const { look } = await dataSet(dir, [source(fixture(dir, "mapped-address", "::ffff:185.220.101.7\n"), tor)]);
    expect(look("185.220.101.7")).toMatchObject({ network: "185.220.101.7/32", privacy: privacy({ tor: true }) });
    expect(look("185.220.101.8").privacy).toEqual(privacy({ tor: false }));
  });
});

describe("blocks larger than a /8 or a /16", () => {
  test("are refused: 0.0.0.0/0, ::/0 and the like in a signal source are taken for a mistake", async () => {
    expect(await refusal("0.0.0.0/0\n", tor, "everything")).toBe('everything:1: "0.0.0.0/0" is larger than a /8: a block that large in a signal source is taken for a mistake');
    expect(await refusal("# all of it\n::/0\n", tor, "everything-v6")).toBe('everything-v6:2: "::/0" is larger than a /16: a block that large in a signal source is taken for a mistake');
    expect(await refusal("2.0.0.0/7\n", tor, "slash7")).toBe('slash7:1: "2.0.0.0/7" is larger than a /8: a block that large in a signal source is taken for a mistake');
    expect(await refusal("2000::/15,US,,,\n", relay, "slash15.csv")).toBe('slash15.csv:1: "2000::/15" is larger than a /16: a block that large in a signal source is taken for a mistake');
    expect(await refusal(aws(["0.0.0.0/0"]), undefined, "everything-ip-ranges.json")).toBe(
      'everything-ip-ranges.json:6: prefixes[0].ip_prefix "0.0.0.0/0" is larger than a /8: a block that large in a signal source is taken for a mistake',
    );
  });

  test("a /8 and a /16 are taken", async () => {
    const { look } = await dataSet(dir, [source(fixture(dir, "large", "20.0.0.0/8\n2600::/16\n"), { signal: "hosting", service: "Large" })]);
    expect(look("20.255.255.255")).toMatchObject({ network: "20.0.0.0/8", privacy: privacy({ hosting: true }, "Large") });
    expect(look("2600:ffff::1")).toMatchObject({ network: "2600::/16", privacy: privacy({ hosting: true }, "Large") });
  });
});

describe("a block of the wrong family", () => {
  test("AWS: an IPv6 block in \"prefixes\" (the IPv4 list), an IPv4 one in \"ipv6_prefixes\", is refused", async () => {
    expect(await refusal(aws(["3.5.0.0/16", "2600:1f18::/33"]), undefined, "v6-in-v4.json")).toBe('v6-in-v4.json:12: prefixes[1].ip_prefix "2600:1f18::/33" is an IPv6 block, where the feed lists IPv4 blocks');
    expect(await refusal(aws(["3.5.0.0/16"], ["3.6.0.0/16"]), undefined, "v4-in-v6.json")).toBe('v4-in-v6.json:14: ipv6_prefixes[0].ipv6_prefix "3.6.0.0/16" is an IPv4 block, where the feed lists IPv6 blocks');
    expect(await refusal(aws(["3.5.0.0/16"], ["::ffff:3.6.0.1"]), undefined, "mapped-in-v6.json")).toBe('mapped-in-v6.json:14: ipv6_prefixes[0].ipv6_prefix "::ffff:3.6.0.1" is an IPv4-mapped IPv6 address, where the feed lists IPv6 blocks');
  });

  test("Google: an ipv4Prefix that is IPv6 is refused", async () => {
    expect(await refusal(google([{ ipv4Prefix: "2600:1900::/28", service: "Google Cloud", scope: "us-east1" }]), undefined, "google-family.json")).toBe(
      'google-family.json:6: prefixes[0].ipv4Prefix "2600:1900::/28" is an IPv6 block, where the feed lists IPv4 blocks',
    );
  });
});

describe("Google Cloud entries", () => {
  test("an entry with both an ipv4Prefix and an ipv6Prefix gives both blocks", async () => {
    const path = fixture(dir, "both-cloud.json", google([{ ipv4Prefix: "34.1.208.0/20", ipv6Prefix: "2600:1900:4000::/44", service: "Google Cloud", scope: "us-east1" }]));
    const { look } = await dataSet(dir, [source(path)]);
    const hosting = privacy({ hosting: true }, "Google Cloud (us-east1)");
    expect(look("34.1.208.1")).toMatchObject({ network: "34.1.208.0/20", privacy: hosting });
    expect(look("2600:1900:4000::1")).toMatchObject({ network: "2600:1900:4000::/44", privacy: hosting });
  });

  test("a service or scope that is not text is refused naming the entry; one left out is Google Cloud, global", async () => {
    expect(await refusal(google([{ ipv4Prefix: "34.1.208.0/20", service: "Google Cloud", scope: "us-east1" }, { ipv4Prefix: "34.1.224.0/19", service: 7, scope: "us-east1" }]), undefined, "service-7.json")).toBe(
      "service-7.json: prefixes[1].service is not text (7)",
    );
    expect(await refusal(google([{ ipv4Prefix: "34.1.224.0/19", service: "Google Cloud", scope: ["us-east1"] }]), undefined, "scope-list.json")).toBe('scope-list.json: prefixes[0].scope is not text (["us-east1"])');
    const { look } = await dataSet(dir, [{ files: [{ path: fixture(dir, "no-service-cloud.json", google([{ ipv4Prefix: "34.1.224.0/19" }])), format: "google-cloud" }] }]);
    expect(look("34.1.224.1").privacy).toEqual(privacy({ hosting: true }, "Google Cloud"));
  });
});

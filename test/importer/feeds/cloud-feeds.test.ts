import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { dataSet, fixture, fixtureDir, privacy, source } from "./support.ts";

const dir = fixtureDir("cloud");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** found, network and privacy of a lookup. */
async function answers(path: string) {
  const { look, index } = await dataSet(dir, [source(path)]);
  return { index, at: (ip: string) => ({ found: look(ip).found, network: look(ip).network, privacy: look(ip).privacy }) };
}

describe("AWS ip-ranges.json", () => {
  // AWS lists its space as AMAZON and the same or smaller blocks again under EC2: the
  // more specific service wins, and at equal blocks EC2 over AMAZON.
  const json = JSON.stringify(
    {
      syncToken: "1764000000",
      createDate: "2026-11-24-22-13-08",
      prefixes: [
        { ip_prefix: "3.5.0.0/16", region: "us-east-1", service: "AMAZON", network_border_group: "us-east-1" },
        { ip_prefix: "3.5.16.0/20", region: "us-east-1", service: "EC2", network_border_group: "us-east-1" },
        { ip_prefix: "3.5.16.0/20", region: "us-east-1", service: "AMAZON", network_border_group: "us-east-1" },
        { ip_prefix: "13.32.0.0/15", region: "GLOBAL", service: "CLOUDFRONT", network_border_group: "GLOBAL" },
      ],
      ipv6_prefixes: [
        { ipv6_prefix: "2600:1f18::/32", region: "us-east-1", service: "AMAZON", network_border_group: "us-east-1" },
        { ipv6_prefix: "2600:1f18::/33", region: "us-east-1", service: "EC2", network_border_group: "us-east-1" },
      ],
    },
    null,
    2,
  );

  test("inside each block hosting with its service, outside false; network at every edge", async () => {
    const { at, index } = await answers(fixture(dir, "ip-ranges.json", json));
    const amazon = privacy({ hosting: true }, "Amazon Web Services (us-east-1)");
    const ec2 = privacy({ hosting: true }, "Amazon EC2 (us-east-1)");
    const outside = privacy({ hosting: false });
    expect(at("3.4.255.255")).toEqual({ found: false, network: null, privacy: outside });
    expect(at("3.5.0.0")).toEqual({ found: true, network: "3.5.0.0/20", privacy: amazon });
    expect(at("3.5.15.255")).toEqual({ found: true, network: "3.5.0.0/20", privacy: amazon });
    expect(at("3.5.16.0")).toEqual({ found: true, network: "3.5.16.0/20", privacy: ec2 });
    expect(at("3.5.31.255")).toEqual({ found: true, network: "3.5.16.0/20", privacy: ec2 });
    expect(at("3.5.32.0")).toEqual({ found: true, network: "3.5.32.0/19", privacy: amazon });
    expect(at("3.5.255.255")).toEqual({ found: true, network: "3.5.128.0/17", privacy: amazon });
    expect(at("3.6.0.0")).toEqual({ found: false, network: null, privacy: outside });
    expect(at("13.33.1.1")).toEqual({ found: true, network: "13.32.0.0/15", privacy: privacy({ hosting: true }, "Amazon CloudFront") });
    expect(at("2600:1f18::1")).toEqual({ found: true, network: "2600:1f18::/33", privacy: ec2 });
    expect(at("2600:1f18:8000::")).toEqual({ found: true, network: "2600:1f18:8000::/33", privacy: amazon });
    expect(at("2600:1f19::")).toEqual({ found: false, network: null, privacy: outside });
    expect(at("2600:1f17:ffff:ffff:ffff:ffff:ffff:ffff")).toEqual({ found: false, network: null, privacy: outside });
    const info = index.info.sources[0]!;
    expect(info).toMatchObject({ name: "AWS IP address ranges", format: "aws-ip-ranges", signal: "hosting", fields: ["privacy"], builtAt: "2026-11-24T22:13:08.000Z", rowsV4: 4, rowsV6: 2 });
    expect(info.license).toBe("none stated by the publisher");
  });
});

test("AWS service codes that are names of Object.prototype's members are codes like any other", async () => {
  const codes = ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf"];
  const json = JSON.stringify({
    syncToken: "1",
    createDate: "2026-11-24-22-13-08",
    prefixes: codes.map((service, i) => ({ ip_prefix: `3.5.${i}.0/24`, region: "us-east-1", service, network_border_group: "us-east-1" })),
  });
  const { at } = await answers(fixture(dir, "proto-ip-ranges.json", json));
  codes.forEach((code, i) => expect(at(`3.5.${i}.1`).privacy).toEqual(privacy({ hosting: true }, `AWS ${code} (us-east-1)`)));
});

describe("Google Cloud cloud.json", () => {
  const json = JSON.stringify({
    syncToken: "1764000000000",
    creationTime: "2026-11-24T23:00:00.000000",
    prefixes: [
      { ipv4Prefix: "34.1.208.0/20", service: "Google Cloud", scope: "africa-south1" },
      { ipv4Prefix: "34.1.224.0/19", service: "Google Cloud", scope: "us-east1" },
      { ipv6Prefix: "2600:1900:4000::/44", service: "Google Cloud", scope: "us-east1" },
    ],
  });

  test("each block hosting with its scope; neighbours of two scopes stay apart", async () => {
    const { at } = await answers(fixture(dir, "cloud.json", json));
    expect(at("34.1.207.255")).toEqual({ found: false, network: null, privacy: privacy({ hosting: false }) });
    expect(at("34.1.208.0")).toEqual({ found: true, network: "34.1.208.0/20", privacy: privacy({ hosting: true }, "Google Cloud (africa-south1)") });
    expect(at("34.1.223.255")).toEqual({ found: true, network: "34.1.208.0/20", privacy: privacy({ hosting: true }, "Google Cloud (africa-south1)") });
    expect(at("34.1.224.0")).toEqual({ found: true, network: "34.1.224.0/19", privacy: privacy({ hosting: true }, "Google Cloud (us-east1)") });
    expect(at("34.2.0.0").found).toBe(false);
    expect(at("2600:1900:4000::1")).toEqual({ found: true, network: "2600:1900:4000::/44", privacy: privacy({ hosting: true }, "Google Cloud (us-east1)") });
    expect(at("2600:1900:4010::").found).toBe(false);
  });
});

describe("Azure Service Tags JSON", () => {
  const tag = (name: string, region: string, systemService: string, addressPrefixes: string[]) => ({
    name,
    id: name,
    properties: { changeNumber: 7, region, regionId: 1, platform: "Azure", systemService, addressPrefixes, networkFeatures: ["API", "NSG"] },
  });
  const json = JSON.stringify(
    {
      changeNumber: 312,
      cloud: "Public",
      values: [
        tag("AzureCloud", "", "", ["20.0.0.0/8", "2603:1000::/24"]),
        tag("AzureCloud.eastus", "eastus", "", ["20.1.0.0/16", "2603:1030::/32"]),
        tag("Storage.EastUS", "eastus", "AzureStorage", ["20.1.2.0/24", "20.1.0.0/16"]),
        tag("Storage", "", "AzureStorage", ["20.1.2.0/24"]),
      ],
    },
    null,
    2,
  );

  test("the most specific tag wins, a service's over AzureCloud's and a region's over a global one's", async () => {
    const { at } = await answers(fixture(dir, "ServiceTags_Public_20261124.json", json));
    // 20.1.0.0/16 is both AzureCloud.eastus's and Storage.EastUS's: the service's; 20.1.2.0/24 Storage's, regional over global.
    expect(at("20.1.0.1")).toEqual({ found: true, network: "20.1.0.0/16", privacy: privacy({ hosting: true }, "Azure Storage (eastus)") });
    expect(at("20.1.2.1")).toEqual({ found: true, network: "20.1.0.0/16", privacy: privacy({ hosting: true }, "Azure Storage (eastus)") });
    expect(at("20.0.255.255")).toEqual({ found: true, network: "20.0.0.0/16", privacy: privacy({ hosting: true }, "Microsoft Azure") });
    expect(at("20.2.0.0")).toEqual({ found: true, network: "20.2.0.0/15", privacy: privacy({ hosting: true }, "Microsoft Azure") });
    expect(at("21.0.0.0")).toEqual({ found: false, network: null, privacy: privacy({ hosting: false }) });
    expect(at("2603:1030::1")).toEqual({ found: true, network: "2603:1030::/32", privacy: privacy({ hosting: true }, "Microsoft Azure (eastus)") });
    expect(at("2603:1031::1")).toEqual({ found: true, network: "2603:1031::/32", privacy: privacy({ hosting: true }, "Microsoft Azure") });
    expect(at("2603:1100::").found).toBe(false);
  });
});

describe("Oracle Cloud public_ip_ranges.json", () => {
  const json = JSON.stringify({
    last_updated_timestamp: "2026-11-20T10:00:00.000000",
    regions: [
      { region: "us-phoenix-1", cidrs: [{ cidr: "129.146.0.0/21", tags: ["OCI"] }, { cidr: "2603:c020::/35", tags: ["OCI"] }] },
      { region: "eu-frankfurt-1", cidrs: [{ cidr: "129.146.8.0/21", tags: ["OSN"] }] },
    ],
  });

  test("each block hosting with its region", async () => {
    const { at, index } = await answers(fixture(dir, "public_ip_ranges.json", json));
    expect(at("129.146.0.0")).toEqual({ found: true, network: "129.146.0.0/21", privacy: privacy({ hosting: true }, "Oracle Cloud (us-phoenix-1)") });
    expect(at("129.146.7.255")).toEqual({ found: true, network: "129.146.0.0/21", privacy: privacy({ hosting: true }, "Oracle Cloud (us-phoenix-1)") });
    expect(at("129.146.8.0")).toEqual({ found: true, network: "129.146.8.0/21", privacy: privacy({ hosting: true }, "Oracle Cloud (eu-frankfurt-1)") });
    expect(at("129.146.16.0").found).toBe(false);
    expect(at("2603:c020:1fff:ffff:ffff:ffff:ffff:ffff")).toEqual({ found: true, network: "2603:c020::/35", privacy: privacy({ hosting: true }, "Oracle Cloud (us-phoenix-1)") });
    expect(at("2603:c020:2000::").found).toBe(false);
    expect(index.info.sources[0]!.builtAt).toBe("2026-11-20T10:00:00.000Z");
  });
});

import { afterAll, expect, test } from "bun:test";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { gzip } from "../../support/download-fixtures.ts";
import { cliAsync as cli, startPublisher } from "../../support/publisher.ts";
import { fixture, fixtureDir } from "./support.ts";

const dir = fixtureDir("cli");
const publisher = startPublisher();
afterAll(() => {
  publisher.stop();
  rmSync(dir, { recursive: true, force: true });
});

const AWS = JSON.stringify({
  syncToken: "1",
  createDate: "2026-11-24-22-13-08",
  prefixes: [{ ip_prefix: "3.5.16.0/20", region: "us-east-1", service: "EC2", network_border_group: "us-east-1" }],
  ipv6_prefixes: [{ ipv6_prefix: "2600:1f18::/33", region: "us-east-1", service: "EC2", network_border_group: "us-east-1" }],
});

async function lookup(path: string, ip: string) {
  const result = await cli(["lookup", "--json", "--data", path, ip]);
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout) as { found: boolean; network: string | null; asn: number | null; privacy: Record<string, unknown> };
}

test("data import reads feeds from a compressed file and a URL, data info lists them with their age, data update keeps the Tor list fresh", async () => {
  const path = join(dir, "data.db");
  const torList = fixture(dir, "torbulkexitlist.gz", gzip("185.220.101.1\n185.220.101.2\n"));
  publisher.publish("/ip-ranges.json", { body: AWS, modified: new Date("2026-11-24T22:13:08Z") });
  publisher.publish("/torbulkexitlist", { body: "204.8.96.1\n", modified: new Date("2026-11-25T06:00:00Z") });

  const imported = await cli([
    "data", "import", "--data", path,
    `${publisher.url}/ip-ranges.json`,
    "--signal", "tor", "--name", "Tor exits (file)", torList,
    "--signal", "tor", "--name", "Tor exits", `${publisher.url}/torbulkexitlist`,
    "--with-default",
  ]);
  expect(imported.stderr).not.toContain("error");
  expect(imported.code).toBe(0);
  expect(imported.stdout).toContain("1. AWS IP address ranges (aws-ip-ranges): privacy");

  expect(await lookup(path, "3.5.16.1")).toMatchObject({ found: true, network: "3.5.16.0/20", asn: 14618, privacy: { hosting: true, tor: false, vpn: null, relay: null, proxy: null, service: "Amazon EC2 (us-east-1)" } });
  expect(await lookup(path, "185.220.101.2")).toMatchObject({ network: "185.220.101.2/32", privacy: { hosting: false, tor: true, service: null } });
  expect(await lookup(path, "204.8.96.1")).toMatchObject({ privacy: { tor: true } });
  expect(await lookup(path, "204.8.96.2")).toMatchObject({ privacy: { tor: false } });
  // The default data's hosting list still answers where no feed does.
  expect(await lookup(path, "5.9.0.1")).toMatchObject({ asn: 24940, privacy: { hosting: true, tor: false, service: "Hetzner" } });

  const info = await cli(["data", "info", "--data", path]);
  expect(info.code).toBe(0);
  expect(info.stdout).toContain("1. AWS IP address ranges");
  expect(info.stdout).toMatch(/built: {7}2026-11-24T22:13:08\.000Z \(\d+ (hours|days) old\)/);
  expect(info.stdout).toContain("signal:      hosting (the privacy field's hosting, and its service)");
  expect(info.stdout).toContain("3. Tor exits ");
  expect(info.stdout).toContain("signal:      tor (the privacy field's tor)");
  expect(info.stdout).toContain("options:       --name \"Tor exits\" --signal tor");
  expect(info.stdout).toContain("Hosting and cloud providers' AS numbers");
  expect(info.stdout).toContain("AS numbers:  41 (an address is hosting when its AS is one of them)");
  const json = JSON.parse((await cli(["data", "info", "--json", "--data", path])).stdout) as { fields: string[]; sources: Array<{ name: string; signal: string | null; age_seconds: number | null; format: string; built_at: string }>; recipe: { sources: Array<{ signal?: string }> } };
  expect(json.fields.at(-1)).toBe("privacy");
  expect(json.sources.map((source) => [source.name, source.format, source.signal])).toEqual([
    ["AWS IP address ranges", "aws-ip-ranges", "hosting"],
    ["Tor exits (file)", "address-list", "tor"],
    ["Tor exits", "address-list", "tor"],
    ["ASN (RouteViews, NRO, DB-IP)", "asn-csv", null],
    ["Country (geo-whois-asn-country)", "country-csv", null],
    ["Hosting and cloud providers' AS numbers", "hosting-asns", "hosting"],
  ]);
  const aws = json.sources[0]!;
  expect(aws.age_seconds).toBeGreaterThan(0);
  expect(Math.abs(aws.age_seconds! - (Date.now() - Date.parse("2026-11-24T22:13:08Z")) / 1000)).toBeLessThan(600);
  expect(json.recipe.sources.map((source) => source.signal)).toEqual([undefined, "tor", "tor"]);
  // A downloaded list is as old as its Last-Modified; AWS's file says when it was made.
  expect(json.sources[2]!.built_at).toBe("2026-11-25T06:00:00.000Z");
  expect(json.sources[0]!.built_at).toBe("2026-11-24T22:13:08.000Z");

  // Nothing changed: the file is left as it was.
  const before = readFileSync(path);
  const unchanged = await cli(["data", "update", "--data", path]);
  expect(unchanged.stdout).toContain("No source of");
  expect(unchanged.code).toBe(0);
  expect(readFileSync(path).equals(before)).toBe(true);

  // The Tor list changes: the update reads it again, with its --signal.
  publisher.publish("/torbulkexitlist", { body: "204.8.96.2\n", modified: new Date("2026-11-25T07:00:00Z") });
  const updated = await cli(["data", "update", "--data", path]);
  expect(updated.stderr).not.toContain("failed");
  expect(updated.code).toBe(0);
  expect(updated.stdout).toContain("source 3 (");
  expect(await lookup(path, "204.8.96.1")).toMatchObject({ privacy: { tor: false } });
  expect(await lookup(path, "204.8.96.2")).toMatchObject({ privacy: { tor: true } });
  expect(await lookup(path, "3.5.16.1")).toMatchObject({ privacy: { hosting: true, service: "Amazon EC2 (us-east-1)" } });
}, 60_000);

test("a malformed feed stops the import naming the file and line, and leaves the installed file as it was", async () => {
  const path = join(dir, "kept.db");
  const good = fixture(dir, "exits", "185.220.101.1\n");
  expect((await cli(["data", "import", "--data", path, "--signal", "tor", good])).code).toBe(0);
  const before = readFileSync(path);
  const bad = fixture(dir, "exits-bad", "185.220.101.1\n185.220.101.999\n");
  const refused = await cli(["data", "import", "--data", path, "--signal", "tor", bad]);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain(`${bad}:2: "185.220.101.999" is not an IP address or a CIDR block`);
  expect(readFileSync(path).equals(before)).toBe(true);

  const noSignal = await cli(["data", "import", "--data", path, good]);
  expect(noSignal.code).toBe(1);
  expect(noSignal.stderr).toContain("name it with --signal tor|vpn|proxy|hosting|relay before the file");
  const badSignal = await cli(["data", "import", "--data", path, "--signal", "anonymous", good]);
  expect(badSignal.code).toBe(2);
  expect(badSignal.stderr).toContain('--signal must be one of hosting, tor, vpn, relay, proxy (got "anonymous")');
  const serviceForTor = await cli(["data", "import", "--data", path, "--signal", "tor", "--service", "Onion", good]);
  expect(serviceForTor.code).toBe(2);
  expect(serviceForTor.stderr).toContain("--service names the provider of hosting or relay addresses; a tor source has none");
  expect(readFileSync(path).equals(before)).toBe(true);
}, 60_000);

import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { CorrectionError, checkCorrectionFields } from "../../../src/corrections/correction-rules.ts";
import { buildDataSet } from "../../../src/importer/build.ts";
import type { FeedOptions, SourceSpec } from "../../../src/importer/source.ts";
import { cliAsync as cli } from "../../support/publisher.ts";
import { dataSet, fixture, fixtureDir, privacy, source } from "./support.ts";

// A signal source's service is answered in every result its blocks cover: it keeps the
// rule a correction's privacy.service keeps (the same function): 1 to 200 characters,
// not all spaces, without control characters. A feed that names another is refused,
// naming the entry; --service another exits 2.

const dir = fixtureDir("service-text");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const RULE = "1 to 200 characters, not all spaces, without control characters";

async function refusal(spec: SourceSpec): Promise<string> {
  const error = (await buildDataSet([spec], new Date()).then(
    () => null,
    (caught: Error) => caught,
  )) as Error | null;
  expect(error).not.toBeNull();
  return (error as Error).message.slice(dir.length + 1);
}

const aws = (region: string, service = "EC2") =>
  JSON.stringify(
    {
      syncToken: "1",
      createDate: "2026-11-24-22-13-08",
      prefixes: [
        { ip_prefix: "3.5.0.0/16", region: "us-east-1", service: "EC2", network_border_group: "us-east-1" },
        { ip_prefix: "3.6.0.0/16", region, service, network_border_group: "us-east-1" },
      ],
    },
    null,
    2,
  );

describe("services a feed names", () => {
  test.each([
    ["an AWS region of 10,000 characters", "aws-long.json", aws("r".repeat(10_000)), `aws-long.json:12: prefixes[1]: the service "Amazon EC2 (${"r".repeat(68)}"… is refused: a service is ${RULE}`],
    ["an AWS service code of 10,000 characters", "aws-code.json", aws("us-east-1", "S".repeat(10_000)), `aws-code.json:12: prefixes[1]: the service "AWS ${"S".repeat(76)}"… is refused: a service is ${RULE}`],
    ["an AWS region with NUL", "aws-nul.json", aws("us-east-1\u0000"), `aws-nul.json:12: prefixes[1]: the service "Amazon EC2 (us-east-1\\u0000)" is refused: a service is ${RULE}`],
    ["an AWS service code with ESC", "aws-esc.json", aws("us-east-1", "EC2\u001b[2J"), `aws-esc.json:12: prefixes[1]: the service "AWS EC2\\u001b[2J (us-east-1)" is refused: a service is ${RULE}`],
    ["an AWS region with CSI (C1)", "aws-csi.json", aws("us-east-1\u009b2J"), `aws-csi.json:12: prefixes[1]: the service "Amazon EC2 (us-east-1\\u009b2J)" is refused: a service is ${RULE}`],
    [
      "an Azure region with a newline",
      "tags.json",
      JSON.stringify({ changeNumber: 1, cloud: "Public", values: [{ name: "Storage.EastUS", id: "Storage.EastUS", properties: { region: "east\nus", systemService: "AzureStorage", addressPrefixes: ["20.1.2.0/24"] } }] }, null, 2),
      `tags.json:6: values[0]: the service "Azure Storage (east\\nus)" is refused: a service is ${RULE}`,
    ],
    [
      "an Oracle region with BEL",
      "oracle.json",
      JSON.stringify({ last_updated_timestamp: "2026-11-20T10:00:00", regions: [{ region: "us-phoenix-1\u0007", cidrs: [{ cidr: "129.146.0.0/21", tags: ["OCI"] }] }] }, null, 2),
      `oracle.json:5: regions[0]: the service "Oracle Cloud (us-phoenix-1\\u0007)" is refused: a service is ${RULE}`,
    ],
    [
      "a Google scope of 300 characters",
      "cloud.json",
      JSON.stringify({ syncToken: "1", creationTime: "2026-11-24T23:00:00", prefixes: [{ ipv4Prefix: "34.1.208.0/20", service: "Google Cloud", scope: "s".repeat(300) }] }, null, 2),
      `cloud.json:6: prefixes[0]: the service "Google Cloud (${"s".repeat(66)}"… is refused: a service is ${RULE}`,
    ],
  ])("%s: refused, naming the entry", async (_, name, content, message) => {
    expect(await refusal(source(fixture(dir, name, content)))).toBe(message);
  });

  test("a service of 200 characters is taken", async () => {
    const region = "r".repeat(200 - "Amazon EC2 ()".length);
    const { look } = await dataSet(dir, [source(fixture(dir, "aws-200.json", aws(region)))]);
    expect(look("3.6.0.1").privacy).toEqual(privacy({ hosting: true }, `Amazon EC2 (${region})`));
  });
});

describe("--service of a list or geofeed", () => {
  // As the data file's record of an import gives it to data update, past the command line's check.
  test.each<[string, FeedOptions]>([
    ["201 characters", { signal: "hosting", service: "x".repeat(201) }],
    ["a NUL", { signal: "relay", service: "Relay\u0000" }],
    ["a newline", { signal: "relay", service: "Relay\nNext" }],
    ["only spaces", { signal: "relay", service: "   " }],
  ])("with %s: refused, naming the file", async (_, feed) => {
    expect(await refusal(source(fixture(dir, "list", "1.2.3.0/24\n"), feed))).toMatch(new RegExp(`^list: --service ".*"…? is refused: a service is ${RULE}$`));
    expect(await refusal(source(fixture(dir, "geofeed.csv", "1.2.3.0/24,US,,,\n"), feed))).toMatch(new RegExp(`^geofeed\\.csv: --service ".*"…? is refused: a service is ${RULE}$`));
  });

  test("data import --service of 10,000 characters, or with ESC, exits 2 with the rule, and imports nothing", async () => {
    const list = fixture(dir, "ips-v4", "173.245.48.0/20\n");
    for (const service of ["x".repeat(10_000), "Cloud\u001b]0;owned\u0007flare"]) {
      const refused = await cli(["data", "import", "--data", `${dir}/cli.db`, "--signal", "hosting", "--service", service, list]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(`--service must be ${RULE}`);
      expect(refused.stderr).not.toContain("\u001b");
    }
    expect(await Bun.file(`${dir}/cli.db`).exists()).toBe(false);
  }, 30_000);
});

test("a tag or region name quoted in a message has its control characters escaped", async () => {
  const tags = JSON.stringify({ changeNumber: 1, cloud: "Public", values: [{ name: "Evil\u001b[2J", id: "x", properties: { region: "", systemService: "", addressPrefixes: ["20.1.2.999/24"] } }] });
  expect(await refusal(source(fixture(dir, "evil-tags.json", tags)))).toBe('evil-tags.json:1: "20.1.2.999/24" is not an IP address or a CIDR block (tag "Evil\\u001b[2J")');
  const oracle = JSON.stringify({ last_updated_timestamp: "2026-11-20T10:00:00", regions: [{ region: "us\u009b2J", cidrs: [{ cidr: "129.146.0.999/21", tags: ["OCI"] }] }] });
  expect(await refusal(source(fixture(dir, "evil-oracle.json", oracle)))).toBe('evil-oracle.json:1: "129.146.0.999/21" is not an IP address or a CIDR block (region "us\\u009b2J")');
});

test("the rule is the one a correction's privacy.service keeps", () => {
  expect(() => checkCorrectionFields({ privacy: { service: "x".repeat(201) } })).toThrow(new CorrectionError(`privacy.service: ${RULE}`));
  expect(() => checkCorrectionFields({ privacy: { service: "Relay\u0007" } })).toThrow(`privacy.service: ${RULE}`);
  expect(checkCorrectionFields({ privacy: { service: "x".repeat(200) } })).toEqual({ privacy: { service: "x".repeat(200) } });
});

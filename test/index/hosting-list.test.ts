import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseAddress } from "../../src/address/parse.ts";
import { buildDataSet } from "../../src/importer/build.ts";
import { parseCsvLine } from "../../src/importer/csv.ts";
import { writeDataFile } from "../../src/importer/data-file.ts";
import { HOSTING_LIST_PATH, readHostingList } from "../../src/importer/hosting-asns.ts";
import { RangeIndex } from "../../src/index/range-index.ts";
import { LookupService } from "../../src/lookup/lookup-service.ts";
import { defaultIndex } from "../support/default-data.ts";
import { hostingBy, NOT_HOSTING } from "../support/privacy.ts";
import { writeSmallSources } from "../support/small-dataset.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-hosting-list-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the default data answers hosting from the hosting list", () => {
  const index = defaultIndex();
  const service = new LookupService(() => index);
  const look = (ip: string) => service.lookup(service.resolve([ip]))[0]!;

  test("an address in a listed AS is hosting, with the provider; elsewhere false; tor, vpn, relay, proxy null", () => {
    expect(look("5.9.0.1")).toMatchObject({ asn: 24940, privacy: hostingBy("Hetzner") });
    expect(look("2a01:4f8::1")).toMatchObject({ asn: 24940, privacy: hostingBy("Hetzner") });
    expect(look("3.5.0.1")).toMatchObject({ asn: 14618, privacy: hostingBy("Amazon Web Services") });
    expect(look("1.1.1.1")).toMatchObject({ asn: 13335, privacy: hostingBy("Cloudflare") });
    // Google's own AS (its services, not its cloud) is not listed; nor is an access network.
    expect(look("8.8.8.8")).toMatchObject({ asn: 15169, privacy: NOT_HOSTING });
    expect(look("100.0.0.1")).toMatchObject({ asn: 701, privacy: NOT_HOSTING });
    // Nothing found: still false, since the data has a source of hosting.
    expect(look("2c0f:ffff:ffff::1")).toMatchObject({ found: false, privacy: NOT_HOSTING });
  });

  test("the exported answer for an AS number: true when listed, false otherwise", () => {
    expect(index.hostingOfAsn(24940)).toBe(true);
    expect(index.hostingOfAsn(16509)).toBe(true);
    expect(index.hostingOfAsn(15169)).toBe(false);
    expect(index.hostingOfAsn(0)).toBe(false);
    expect(index.hostingOfAsn(4294967295)).toBe(false);
  });

  test("data info lists the list as a source of hosting", () => {
    expect(index.info.sources.at(-1)).toMatchObject({ name: "Hosting and cloud providers' AS numbers", origin: "data/hosting-asns.csv", format: "hosting-asns", signal: "hosting", fields: ["privacy"] });
    expect(index.info.fields.at(-1)).toBe("privacy");
  });

  test("every listed AS is in the default data under the name the list gives it, and has a record", () => {
    const names = new Map<number, string>();
    for (let id = 1; id <= index.info.records; id++) {
      const record = index.record(id);
      if (record.asn !== null && record.as_name !== null) names.set(record.asn, record.as_name);
    }
    const rows = readFileSync(HOSTING_LIST_PATH, "utf8")
      .split("\n")
      .filter((line) => /^\d/.test(line))
      .map((line) => parseCsvLine(line));
    expect(rows.length).toBeGreaterThanOrEqual(30);
    expect(readHostingList().asns.size).toBe(rows.length);
    for (const [asn, , asName, record] of rows) {
      expect({ asn, asName }).toEqual({ asn, asName: names.get(Number(asn)) });
      expect(record).toMatch(/^https:\/\/\S+$/);
    }
  });
});

describe("a data set without a hosting list", () => {
  test("answers hosting null, and null for every AS number", async () => {
    const path = join(dir, "small.db");
    const sub = mkdtempSync(join(dir, "small-"));
    writeDataFile(path, await buildDataSet(writeSmallSources(sub), new Date("2026-11-01T00:00:00Z")));
    const index = RangeIndex.open(path);
    expect(index.hostingOfAsn(13335)).toBeNull();
    expect(index.lookup(parseAddress("1.0.0.1")!)?.record.privacy).toEqual({ hosting: null, tor: null, vpn: null, relay: null, proxy: null, service: null });
  });

  test("a list given to the build answers for the data set's AS numbers", async () => {
    const path = join(dir, "listed.db");
    const sub = mkdtempSync(join(dir, "listed-"));
    const listPath = join(sub, "hosting.csv");
    writeFileSync(listPath, "# reviewed: 2026-11-20\nasn,provider,as_name,record\n15169,Example Cloud,Google LLC,https://rdap.org/autnum/15169\n");
    const hostingList = readHostingList(listPath, "hosting.csv");
    writeDataFile(path, await buildDataSet(writeSmallSources(sub), new Date("2026-11-01T00:00:00Z"), undefined, { hostingList }));
    const index = RangeIndex.open(path);
    expect(index.lookup(parseAddress("8.8.8.8")!)?.record.privacy).toEqual(hostingBy("Example Cloud"));
    expect(index.lookup(parseAddress("1.0.0.1")!)?.record.privacy).toEqual(NOT_HOSTING);
    expect(index.hostingOfAsn(15169)).toBe(true);
    expect(index.hostingOfAsn(13335)).toBe(false);
    expect(index.info.sources.at(-1)).toMatchObject({ origin: "hosting.csv", version: expect.stringMatching(/^2026-11-20-[0-9a-f]{8}$/), builtAt: "2026-11-20T00:00:00.000Z" });
  });
});

describe("the list's own file is checked, naming the line at fault", () => {
  const HEADER = "# reviewed: 2026-11-20\nasn,provider,as_name,record\n";
  test.each([
    ["an AS number with a letter", `${HEADER}AS24940,Hetzner,Hetzner Online GmbH,https://rdap.org/autnum/24940\n`, /bad\.csv, line 3: "AS24940" is not an AS number/],
    ["an AS listed twice", `${HEADER}24940,Hetzner,x,https://rdap.org/autnum/24940\n24940,Hetzner,x,https://rdap.org/autnum/24940\n`, /bad\.csv, line 4: AS24940 is listed twice/],
    ["a record that is no URL", `${HEADER}24940,Hetzner,x,peeringdb\n`, /bad\.csv, line 3: the record "peeringdb" is not an http\(s\) URL/],
    ["a missing field", `${HEADER}24940,Hetzner,https://rdap.org/autnum/24940\n`, /bad\.csv, line 3: 4 fields expected/],
    ["no header", "# reviewed: 2026-11-20\n24940,Hetzner,x,https://rdap.org/autnum/24940\n", /bad\.csv, line 2: the header must be/],
    ["no date", "asn,provider,as_name,record\n", /bad\.csv: no "# reviewed: YYYY-MM-DD" line/],
  ])("%s", (_, text, message) => {
    const path = join(dir, "bad.csv");
    writeFileSync(path, text);
    expect(() => readHostingList(path)).toThrow(message);
  });
});

import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseAddress } from "../../src/address/parse.ts";
import { RangeIndex } from "../../src/index/range-index.ts";
import { cliAsync as cli, startPublisher } from "../support/publisher.ts";

// A publisher that answers an empty body, or a one-line error page with 200, must not
// empty the data of the source it publishes: the update is refused, the file stays.
const dir = mkdtempSync(join(tmpdir(), "iplookup-empty-source-"));
const publisher = startPublisher();
afterAll(() => {
  publisher.stop();
  rmSync(dir, { recursive: true, force: true });
});

const ASN = "1.0.0.0,1.0.0.255,13335,CLOUDFLARENET\n2606:4700::,2606:4700:ffff:ffff:ffff:ffff:ffff:ffff,13335,CLOUDFLARENET\n";

function identity(path: string) {
  const stat = statSync(path);
  return { ino: stat.ino, mtimeMs: stat.mtimeMs, bytes: readFileSync(path) };
}

function asnOf(path: string, ip: string) {
  return RangeIndex.open(path).lookup(parseAddress(ip)!)?.record.asn;
}

test("data update: an empty body, or 200 with a one-line error page, for an asn-csv source is refused and the file is left as it was", async () => {
  const path = join(dir, "asn.db");
  publisher.publish("/asn.csv", { body: ASN });
  const url = `${publisher.url}/asn.csv`;
  const imported = await cli(["data", "import", "--data", path, "--format", "asn-csv", url]);
  expect(imported.code).toBe(0);
  expect(asnOf(path, "1.0.0.1")).toBe(13335);
  const before = identity(path);

  publisher.publish("/asn.csv", { body: "" });
  let result = await cli(["data", "update", "--data", path]);
  expect(result.stderr).toContain(`iplookup: data update failed: source 1 (${url}): it holds no rows (an empty file, or a page that is not data); refused; ${path} is left as it was`);
  expect(result.stdout).not.toContain("Updated");
  expect(result.code).toBe(1);
  expect(identity(path)).toEqual(before);

  publisher.publish("/asn.csv", { body: "Rate limit exceeded\n" });
  result = await cli(["data", "update", "--data", path]);
  expect(result.stderr).toContain(`iplookup: data update failed: ${url}:1: expected 4 fields (start,end,autonomous_system_number,autonomous_system_organization), found 1; ${path} is left as it was`);
  expect(result.code).toBe(1);
  expect(identity(path)).toEqual(before);

  publisher.publish("/asn.csv", { body: "start,end,autonomous_system_number,autonomous_system_organization\n" });
  result = await cli(["data", "update", "--data", path]);
  expect(result.stderr).toContain(`source 1 (${url}): it holds no rows`);
  expect(result.code).toBe(1);
  expect(identity(path)).toEqual(before);
  expect(asnOf(path, "1.0.0.1")).toBe(13335);

  // Data again: the update goes through.
  publisher.publish("/asn.csv", { body: ASN.replaceAll("13335", "64500") });
  result = await cli(["data", "update", "--data", path]);
  expect(result.code).toBe(0);
  expect(asnOf(path, "1.0.0.1")).toBe(64500);
});

test("data import: an empty, blank-lines-only or header-only file given with --format is refused, nothing written", async () => {
  const cases: Array<[string, string]> = [
    ["empty.csv", ""],
    ["blank.csv", "\n\n\r\n"],
    ["header.csv", "start,end,autonomous_system_number,autonomous_system_organization\n"],
  ];
  for (const [name, content] of cases) {
    const file = join(dir, name);
    writeFileSync(file, content);
    const path = join(dir, `${name}.db`);
    const result = await cli(["data", "import", "--data", path, "--format", "asn-csv", file]);
    expect(result.stderr).toContain(`source 1 (${file}): it holds no rows`);
    expect(result.code).toBe(1);
    expect(existsSync(path)).toBe(false);
  }
});

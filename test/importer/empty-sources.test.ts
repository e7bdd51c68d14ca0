import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildDataSet } from "../../src/importer/build.ts";
import type { SourceFormat } from "../../src/importer/detect-format.ts";
import { writeMmdb } from "../support/mmdb-writer.ts";

// A source that yields no rows would replace its data with nothing: an empty download, a
// header alone, or a page that is not data is refused, naming the source.
const dir = mkdtempSync(join(tmpdir(), "iplookup-empty-sources-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ASN = "1.0.0.0,1.0.0.255,13335,CLOUDFLARENET\n";

function file(name: string, content: string | Uint8Array): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

test.each<[string, SourceFormat, string]>([
  ["an empty file", "asn-csv", ""],
  ["blank lines only", "asn-csv", "\n\r\n\n"],
  ["a header only", "asn-csv", "start,end,autonomous_system_number,autonomous_system_organization\n"],
  ["a TSV header only", "iptoasn-tsv", "range_start\trange_end\tAS_number\tcountry_code\tAS_description\n"],
  ["Not routed rows only", "iptoasn-tsv", "0.0.0.0\t0.255.255.255\t0\tNone\tNot routed\n"],
  ["an empty country file", "country-csv", ""],
])("%s (%s): refused, naming the source by its position and file", async (name, format, content) => {
  const good = file("good-asn.csv", ASN);
  const empty = file(`empty-${name.replaceAll(" ", "-")}`, content);
  const build = buildDataSet(
    [
      { files: [{ path: good, format: "asn-csv" }] },
      { files: [{ path: empty, format }] },
    ],
    new Date("2026-11-01T00:00:00Z"),
  );
  await expect(build).rejects.toThrow(`source 2 (${empty}): it holds no rows (an empty file, or a page that is not data); refused`);
});

test("an MMDB with no networks is refused by its reader", async () => {
  const mmdb = file("empty.mmdb", writeMmdb({ ipVersion: 6, databaseType: "GeoLite2-ASN", networks: [] }).bytes);
  await expect(buildDataSet([{ files: [{ path: mmdb }] }], new Date())).rejects.toThrow(`${mmdb}: the search tree has no data`);
});

test("a one-line error page answered as data is a malformed row, not a header", async () => {
  const page = file("rate-limited.csv", "Rate limit exceeded\n");
  await expect(buildDataSet([{ files: [{ path: page, format: "asn-csv" }] }], new Date())).rejects.toThrow(/rate-limited\.csv:1: expected 4 fields/);
});

test("the label a download is named by is the one the message gives", async () => {
  const empty = file("download-1", "");
  await expect(buildDataSet([{ files: [{ path: empty, format: "asn-csv", label: "https://example.test/asn.csv" }] }], new Date())).rejects.toThrow(
    "source 1 (https://example.test/asn.csv): it holds no rows",
  );
});

test("a source of two files, one of them empty, is refused: its other half would be all that is left", async () => {
  const v4 = file("asn-ipv4.csv", ASN);
  const v6 = file("asn-ipv6.csv", "");
  await expect(buildDataSet([{ files: [{ path: v4, format: "asn-csv" }, { path: v6, format: "asn-csv" }] }], new Date())).rejects.toThrow(`source 1 (${v6}): it holds no rows`);
});

test("a source with rows in one family only is read", async () => {
  const v4 = file("only-v4.csv", ASN);
  const built = await buildDataSet([{ files: [{ path: v4, format: "asn-csv" }] }], new Date());
  expect(built.sources[0]?.rowsV4).toBe(1);
  expect(built.sources[0]?.rowsV6).toBe(0);
});

import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseAddress } from "../../src/address/parse.ts";
import { RangeIndex } from "../../src/index/range-index.ts";
import { readSourceFile } from "../../src/importer/read-source-file.ts";
import { runCliInProcess } from "../support/in-process-cli.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-read-source-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

/**
 * docs/data.md: addresses are text, or integers with "the family from the file name or
 * `--family`". `data import` reads every file under a label (the location as given, a
 * member of an archive), which is where the file name's family was applied to every row.
 */
describe("the family a file's name gives applies to integer addresses only", () => {
  const ipv4Text = "1.2.3.0,1.2.3.255,64500,Example\n";

  test("a file named …-ipv6.csv holding IPv4 text is read as IPv4, labelled or not", async () => {
    const path = file("m-ipv6.csv", ipv4Text);
    for (const options of [{ label: "https://example.test/m-ipv6.csv" }, { label: path }, {}]) {
      const { part } = await readSourceFile(path, options);
      expect(part.rows).toEqual({ 4: 1, 6: 0 });
    }
  });

  test("integer addresses still take the family from the file's own name under a label that says none", async () => {
    const path = file("asn-ipv6-num.csv", "1,2,64500,Example\n");
    const { part } = await readSourceFile(path, { label: "https://example.test/download?id=7" });
    expect(part.rows).toEqual({ 4: 0, 6: 1 });
  });

  test("an explicit family still refuses text of the other family", async () => {
    const path = file("plain.csv", ipv4Text);
    await expect(readSourceFile(path, { family: 6, label: "plain.csv" })).rejects.toThrow(/^plain\.csv:1: the range is IPv4, but the file is read as IPv6$/);
  });

  test("data import of m-ipv6.csv holding IPv4 text imports it, as the same file named m.csv does", async () => {
    for (const name of ["m-ipv6.csv", "m.csv"]) {
      const source = file(name, ipv4Text);
      const data = join(dir, `${name}.db`);
      const result = await runCliInProcess(join(dir, "none.db"), ["data", "import", "--data", data, "--name", "m", "--license", "internal", source]);
      expect(result.stderr).not.toContain("the file is read as");
      expect(result.code).toBe(0);
      expect(RangeIndex.open(data).lookup(parseAddress("1.2.3.4")!)?.network).toBe("1.2.3.0/24");
    }
  });
});

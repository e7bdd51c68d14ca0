import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { iptoasnTsv } from "../support/download-fixtures.ts";
import { cliAsync as cli, startPublisher } from "../support/publisher.ts";

/**
 * An import whose writes stop at the file size limit (`ulimit -f`; the kernel answers
 * EFBIG, as a full disk answers ENOSPC): it fails naming the limit, not a full disk,
 * leaves the installed file as it was and nothing beside it. Writing the data file,
 * SQLite gives up part-way with its pages spilled to the file: the rollback journal it
 * kept beside it goes too.
 */
const dir = mkdtempSync(join(tmpdir(), "iplookup-size-limit-"));
const publisher = startPublisher();
afterAll(() => {
  publisher.stop();
  rmSync(dir, { recursive: true, force: true });
});
const MAIN = new URL("../../src/main.ts", import.meta.url).pathname;
/** bash's `ulimit -f` counts blocks of 1,024 bytes (a POSIX sh's, of 512). */
const LIMIT_BLOCKS = 1000;

/** An iptoasn TSV of `rows` networks, each its own AS: 80,000 rows make a 3.6 MB file and a 3.7 MB data file. */
function manyNetworks(rows: number): string {
  const lines: string[] = [];
  for (let i = 0; i < rows; i++) {
    const prefix = `${11 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`;
    lines.push(`${prefix}.0\t${prefix}.255\t${64512 + i}\tUS\tNET-${i}`);
  }
  return `${lines.join("\n")}\n`;
}

const big = join(dir, "big.tsv");
beforeAll(() => writeFileSync(big, manyNetworks(80_000)));

let folders = 0;
/** A folder holding a small installed data.db. */
async function installed(): Promise<{ folder: string; path: string; bytes: Buffer }> {
  const folder = join(dir, `f${++folders}`);
  mkdirSync(folder);
  const source = join(dir, `small-${folders}.tsv`);
  writeFileSync(source, iptoasnTsv(13335));
  const path = join(folder, "data.db");
  expect((await cli(["data", "import", "--data", path, "--format", "iptoasn-tsv", "--license", "PDDL 1.0", "--attribution", "x", source])).code).toBe(0);
  return { folder, path, bytes: readFileSync(path) };
}

/** `iplookup ARGS` under `ulimit -f LIMIT_BLOCKS`. */
async function runLimited(args: string[]): Promise<{ code: number; stderr: string }> {
  const child = Bun.spawn(["bash", "-c", `ulimit -f ${LIMIT_BLOCKS} && exec "$@"`, "bash", process.execPath, MAIN, ...args], { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stderr, code] = await Promise.all([new Response(child.stderr).text(), child.exited]);
  return { code, stderr };
}

describe("an import stopped by the file size limit", () => {
  test("writing the data file: the limit named, the installed file as it was, no temporary file or journal left", async () => {
    const { folder, path, bytes } = await installed();
    const result = await runLimited(["data", "import", "--data", path, "--format", "iptoasn-tsv", "--license", "PDDL 1.0", "--attribution", "x", big]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`iplookup: cannot write the data file ${path}.`);
    expect(result.stderr).toContain(`(ulimit -f: ${LIMIT_BLOCKS * 1024} bytes)`);
    expect(readFileSync(path).equals(bytes)).toBe(true);
    expect(readdirSync(folder)).toEqual(["data.db"]);
  }, 60_000);

  test("writing a download: the limit named, not a full disk", async () => {
    const { folder, path, bytes } = await installed();
    publisher.publish("/big/ip2asn.tsv", { body: readFileSync(big) });
    const url = `${publisher.url}/big/ip2asn.tsv`;
    const result = await runLimited(["data", "import", "--data", path, "--format", "iptoasn-tsv", url]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      new RegExp(`iplookup: source 1 \\(${url.replaceAll(".", "\\.")}\\): cannot write \\S+/ip2asn\\.tsv: the file size limit was reached \\(ulimit -f: ${LIMIT_BLOCKS * 1024} bytes\\)`),
    );
    expect(result.stderr).not.toContain("disk full");
    expect(readFileSync(path).equals(bytes)).toBe(true);
    expect(readdirSync(folder)).toEqual(["data.db"]);
  }, 60_000);
});

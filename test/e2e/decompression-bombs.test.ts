import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CSV_LINE, gzipBomb, ZEROS, zipBomb } from "../support/bombs.ts";
import { gzip } from "../support/download-fixtures.ts";
import { cliAsync, startPublisher } from "../support/publisher.ts";

/**
 * CONTRACT §13, decompression bounded, end to end: `data import` of a file and `data
 * update` of a download, each given a bomb of zeros and a bomb of valid CSV lines. Each
 * runs with a limit on the size of any file it writes (RLIMIT_FSIZE, set by prlimit)
 * well under what the bomb expands to: an importer that wrote the bomb out before
 * judging it would be killed by SIGXFSZ instead of exiting 1 with the reason. Each
 * leaves the installed file as it was and nothing beside it.
 */
const dir = mkdtempSync(join(tmpdir(), "iplookup-bombs-"));
const publisher = startPublisher();
afterAll(() => {
  publisher.stop();
  rmSync(dir, { recursive: true, force: true });
});
const MAIN = new URL("../../src/main.ts", import.meta.url).pathname;
const PRLIMIT = ["/usr/bin/prlimit", "/bin/prlimit"].find(existsSync);

/** The CLI with no file it writes allowed past `fileSize` bytes. */
async function cliLimited(args: string[], fileSize: number) {
  const limit = PRLIMIT ? [PRLIMIT, `--fsize=${fileSize}`] : [];
  const child = Bun.spawn([...limit, process.execPath, MAIN, ...args], { env: { ...process.env }, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { code, signal: child.signalCode, stdout, stderr };
}

const GOOD = "1.0.0.0,1.0.0.255,AU\n8.8.8.0,8.8.8.255,US\n";
let n = 0;
/** A data file imported from a small good .csv.gz, in a folder of its own. */
async function installed(): Promise<{ folder: string; path: string; before: Buffer }> {
  const folder = join(dir, `case-${++n}`);
  const source = join(dir, `good-${n}.csv.gz`);
  writeFileSync(source, gzip(GOOD));
  const path = join(folder, "data.db");
  const imported = await cliAsync(["data", "import", "--data", path, "--license", "CC0", source]);
  expect(imported.code).toBe(0);
  return { folder, path, before: readFileSync(path) };
}

function expectUntouched(folder: string, path: string, before: Buffer) {
  expect(readFileSync(path).equals(before)).toBe(true);
  expect(readdirSync(folder)).toEqual(["data.db"]);
}

const RATIO = /it expands to more than 100 times the .* of compressed input read plus 64 MiB \(a decompression bomb\?\): stopped/;

describe("data import of a bomb", () => {
  test("a .csv.gz of 256 MiB of zeros, at the default bounds: stopped near 64 MiB, exit 1 naming the file", async () => {
    const { folder, path, before } = await installed();
    const bomb = join(dir, "zeros.csv.gz");
    writeFileSync(bomb, await gzipBomb(ZEROS, 256 * 2 ** 20));
    const result = await cliLimited(["data", "import", "--data", path, bomb], 128 * 2 ** 20);
    expect(result.signal).toBeNull();
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`source 1 (${bomb}): `);
    expect(result.stderr).toMatch(RATIO);
    expectUntouched(folder, path, before);
  });

  test("a .csv.gz of valid CSV lines past --max-expanded 4MiB: stopped there", async () => {
    const { folder, path, before } = await installed();
    const bomb = join(dir, "lines.csv.gz");
    writeFileSync(bomb, await gzipBomb(CSV_LINE, 64 * 2 ** 20));
    const result = await cliLimited(["data", "import", "--data", path, "--max-expanded", "4MiB", bomb], 8 * 2 ** 20);
    expect(result.signal).toBeNull();
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`source 1 (${bomb}): it unpacks to more than --max-expanded 4 MiB: stopped`);
    expectUntouched(folder, path, before);
  });

  test("a .zip of CSV lines past IPLOOKUP_MAX_EXPANDED", async () => {
    const { folder, path, before } = await installed();
    const bomb = join(dir, "lines.zip");
    writeFileSync(bomb, zipBomb("country.csv", CSV_LINE, 16 * 2 ** 20));
    process.env.IPLOOKUP_MAX_EXPANDED = "2MiB";
    try {
      const result = await cliLimited(["data", "import", "--data", path, bomb], 8 * 2 ** 20);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`source 1 (${bomb}): it unpacks to more than --max-expanded 2 MiB: stopped`);
    } finally {
      delete process.env.IPLOOKUP_MAX_EXPANDED;
    }
    expectUntouched(folder, path, before);
  });

  test("a real .csv.gz under the bounds imports; a bad --max-expanded is exit 2", async () => {
    const { path } = await installed();
    const bad = await cliAsync(["data", "import", "--data", path, "--max-expanded", "lots", join(dir, "good-1.csv.gz")]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--max-expanded: "lots" is not a size');
    const ok = await cliAsync(["data", "import", "--data", path, "--max-expanded", "1KiB", "--license", "CC0", join(dir, "good-1.csv.gz")]);
    expect(ok.code).toBe(0);
  });
});

describe("data update of a download that became a bomb", () => {
  for (const [kind, unit] of [["zeros", ZEROS], ["valid CSV lines", CSV_LINE]] as const) {
    test(`${kind}: at the default bounds, and past --max-expanded 2MiB`, async () => {
      const name = `/data/${kind.replaceAll(" ", "-")}.csv.gz`;
      publisher.publish(name, { body: gzip(GOOD) });
      const folder = join(dir, `update-${++n}`);
      const path = join(folder, "data.db");
      expect((await cliAsync(["data", "import", "--data", path, "--license", "CC0", `${publisher.url}${name}`])).code).toBe(0);
      const before = readFileSync(path);

      publisher.publish(name, { body: await gzipBomb(unit, 256 * 2 ** 20) });
      const byRatio = await cliLimited(["data", "update", "--data", path], 128 * 2 ** 20);
      expect(byRatio.signal).toBeNull();
      expect(byRatio.code).toBe(1);
      expect(byRatio.stderr).toContain(`data update failed: source 1 (${publisher.url}${name}): `);
      expect(byRatio.stderr).toMatch(RATIO);
      expect(byRatio.stderr).toContain(`${path} is left as it was`);
      expectUntouched(folder, path, before);

      const bySize = await cliLimited(["data", "update", "--data", path, "--max-expanded", "2MiB"], 8 * 2 ** 20);
      expect(bySize.code).toBe(1);
      expect(bySize.stderr).toContain("it unpacks to more than --max-expanded 2 MiB: stopped");
      expectUntouched(folder, path, before);
      expect(statSync(path).size).toBe(before.byteLength);
    });
  }
});

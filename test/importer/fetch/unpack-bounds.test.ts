import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { COMPRESSED_SLICE, EXPANSION_RATIO, EXPANSION_SLACK, ExpansionBudget } from "../../../src/importer/fetch/expansion.ts";
import { unpack } from "../../../src/importer/fetch/unpack.ts";
import { CSV_LINE, gzipBomb, tarHeader, ZEROS, zipBomb } from "../../support/bombs.ts";
import { gzip } from "../../support/download-fixtures.ts";

/**
 * CONTRACT §13: what compressed input expands to stays under 100 times the compressed
 * bytes read plus 64 MiB, and under --max-expanded; past either, unpacking stops at
 * once (within one chunk of the bound) and leaves no file behind.
 */
const dir = mkdtempSync(join(tmpdir(), "iplookup-unpack-bounds-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
function put(name: string, bytes: Uint8Array): string {
  const folder = join(dir, `in-${++n}`);
  mkdirSync(folder);
  const path = join(folder, name);
  writeFileSync(path, bytes);
  return path;
}

/** Every file under `folder`, recursively. */
function filesUnder(folder: string): string[] {
  let found: string[] = [];
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    found = entry.isDirectory() ? [...found, ...filesUnder(path)] : [...found, path];
  }
  return found;
}

/** Unpacks and expects the stop: its reason, how far it got, and nothing left in its folder. */
async function expectStopped(file: string, name: string, budget: ExpansionBudget, reason: RegExp, most: number) {
  const out = join(dir, `out-${++n}`);
  mkdirSync(out);
  await expect(unpack(file, name, out, undefined, budget)).rejects.toThrow(reason);
  // It stopped at the bound, not at the end of the bomb: within one chunk of output
  // (a gzip chunk is 16 KiB; what a 16 KiB zip slice inflates to, 16.5 MiB at most).
  expect(budget.expanded).toBeLessThanOrEqual(most);
  expect(filesUnder(out)).toEqual([]);
}

const RATIO_REASON = /expands to more than 100 times the .* of compressed input read plus 64 MiB \(a decompression bomb\?\): stopped/;
/** The ratio's bound for a file of `bytes`, when all of it was read, and one slice of inflated output past it. */
const ratioBound = (bytes: number) => EXPANSION_RATIO * (bytes + COMPRESSED_SLICE) + EXPANSION_SLACK + 1033 * COMPRESSED_SLICE;

describe("decompression bombs, by the ratio (default --max-expanded)", () => {
  test("a .gz of 256 MiB of zeros stops near 64 MiB", async () => {
    const bomb = await gzipBomb(ZEROS, 256 * 2 ** 20);
    const budget = new ExpansionBudget();
    await expectStopped(put("zeros.csv.gz", bomb), "zeros.csv.gz", budget, RATIO_REASON, ratioBound(bomb.byteLength));
    expect(budget.expanded).toBeLessThan(96 * 2 ** 20);
  });

  test("a .gz of one valid CSV line repeated (it passes a look at its first lines) stops near 64 MiB", async () => {
    const bomb = await gzipBomb(CSV_LINE, 256 * 2 ** 20);
    const budget = new ExpansionBudget();
    await expectStopped(put("country.csv.gz", bomb), "country.csv.gz", budget, RATIO_REASON, ratioBound(bomb.byteLength));
    expect(budget.expanded).toBeLessThan(96 * 2 ** 20);
  });

  test("a .tar.gz whose one member is 256 MiB of zeros", async () => {
    const bomb = await gzipBomb(ZEROS, 256 * 2 ** 20, tarHeader("GeoLite2-ASN_20261120/GeoLite2-ASN.mmdb", 256 * 2 ** 20));
    const budget = new ExpansionBudget();
    await expectStopped(put("GeoLite2-ASN.tar.gz", bomb), "GeoLite2-ASN.tar.gz", budget, RATIO_REASON, ratioBound(bomb.byteLength));
  });

  test("a .zip of 96 MiB of CSV lines", async () => {
    const bomb = zipBomb("country.csv", CSV_LINE, 96 * 2 ** 20);
    const budget = new ExpansionBudget();
    await expectStopped(put("country.zip", bomb), "country.zip", budget, RATIO_REASON, ratioBound(bomb.byteLength));
  });
});

describe("--max-expanded: what one import unpacks, all sources together", () => {
  const MAX = 2 ** 20;
  const SIZE_REASON = /unpacks to more than --max-expanded 1 MiB: stopped/;

  test("a .gz of zeros and a .gz of CSV lines stop at 1 MiB", async () => {
    for (const unit of [ZEROS, CSV_LINE]) {
      const budget = new ExpansionBudget(MAX);
      await expectStopped(put("x.csv.gz", await gzipBomb(unit, 32 * 2 ** 20)), "x.csv.gz", budget, SIZE_REASON, MAX + 16 * 1024);
    }
  });

  test("a .zip stops before it writes past the bound", async () => {
    const budget = new ExpansionBudget(MAX);
    await expectStopped(put("x.zip", zipBomb("x.csv", CSV_LINE, 8 * 2 ** 20)), "x.zip", budget, SIZE_REASON, MAX + 1033 * COMPRESSED_SLICE);
  });

  test("the budget is shared: two files under it each, over it together", async () => {
    const budget = new ExpansionBudget(MAX);
    const half = gzip(CSV_LINE.repeat(Math.floor(700 * 1024 / CSV_LINE.length)));
    const first = await unpack(put("a.csv.gz", half), "a.csv.gz", join(dir, `out-${++n}`), undefined, budget);
    expect(statSync(first.files[0]?.path as string).size).toBeGreaterThan(600 * 1024);
    await expectStopped(put("b.csv.gz", half), "b.csv.gz", budget, SIZE_REASON, MAX + 16 * 1024);
  });

  test("real data under both bounds unpacks whole", async () => {
    const text = CSV_LINE.repeat(4096);
    const budget = new ExpansionBudget(MAX);
    const result = await unpack(put("ok.csv.gz", gzip(text)), "ok.csv.gz", join(dir, `out-${++n}`), undefined, budget);
    expect(statSync(result.files[0]?.path as string).size).toBe(text.length);
    expect(budget.expanded).toBe(text.length);
  });
});

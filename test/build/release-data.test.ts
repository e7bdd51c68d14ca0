/**
 * The release embeds the default data, built the one way the default data is built
 * (buildDefaultDataFile), stamped with the commit's time: its hosting list included, and
 * the same bytes from the same commit.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildDefaultDataFile } from "../../src/importer/build-default.ts";
import { RangeIndex } from "../../src/index/range-index.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-release-data-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("the default data stamped with a given time: the hosting list in it, and the same bytes twice", async () => {
  const builtAt = new Date("2026-11-20T12:00:00Z");
  const [first, second] = [join(dir, "first.db"), join(dir, "second.db")];
  expect(await buildDefaultDataFile(first, { force: true, builtAt })).toBe(true);
  expect(await buildDefaultDataFile(second, { force: true, builtAt })).toBe(true);
  const index = RangeIndex.open(first);
  expect(index.info.builtAt).toBe(builtAt.toISOString());
  expect(index.hostingOfAsn(16509)).toBe(true);
  expect(index.info.sources.map((source) => source.format)).toContain("hosting-asns");
  expect(Bun.hash(readFileSync(first))).toBe(Bun.hash(readFileSync(second)));
}, 60_000);

test("a default data file is built again when the code that imports data is newer than it, not otherwise", async () => {
  const path = join(dir, "default.db");
  const lines: string[] = [];
  const log = (line: string) => lines.push(line);
  expect(await buildDefaultDataFile(path, { log })).toBe(true);
  expect(await buildDefaultDataFile(path, { log })).toBe(false);
  expect(lines.at(-1)).toContain("is up to date");
  // As after a pull that changed the importer: the file is older than the code.
  utimesSync(path, new Date("2001-01-01T00:00:00Z"), new Date("2001-01-01T00:00:00Z"));
  expect(await buildDefaultDataFile(path, { log })).toBe(true);
  expect(lines.find((line) => line.includes("was built before"))).toMatch(/was built before src\/(importer|data-file)\/.+\.ts changed: building it again$/);
  expect(await buildDefaultDataFile(path, { log })).toBe(false);
}, 60_000);

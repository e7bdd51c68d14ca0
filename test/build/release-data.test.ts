/**
 * The release embeds the default data, built the one way the default data is built
 * (buildDefaultDataFile), stamped with the commit's time: its hosting list included, and
 * the same bytes from the same commit.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
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

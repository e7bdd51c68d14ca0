import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { lastStartAtOrBelow128, lastStartAtOrBelow32 } from "../../src/address/sorted-search.ts";
import { buildDataSet } from "../../src/importer/build.ts";
import { writeDataFile } from "../../src/importer/data-file.ts";
import { RangeIndex } from "../../src/index/range-index.ts";
import { defaultIndex } from "../support/default-data.ts";
import { writeSmallSources } from "../support/small-dataset.ts";

/**
 * The prefix tables in front of the searches are built in one walk over the starts; each
 * entry must be what a search of the whole table for the prefix's first address finds.
 */
const PREFIXES = 0x10000;

function mismatches(index: RangeIndex): string[] {
  const { v4Starts, v6Starts, v4Prefixes, v6Prefixes } = index.image;
  const wrong: string[] = [];
  for (let prefix = 0; prefix < PREFIXES; prefix++) {
    const v4 = lastStartAtOrBelow32(v4Starts, prefix * 0x10000);
    const v6 = lastStartAtOrBelow128(v6Starts, [prefix * 0x10000, 0, 0, 0]);
    if (v4Prefixes[prefix] !== v4) wrong.push(`IPv4 prefix ${prefix}: ${v4Prefixes[prefix]}, search ${v4}`);
    if (v6Prefixes[prefix] !== v6) wrong.push(`IPv6 prefix ${prefix}: ${v6Prefixes[prefix]}, search ${v6}`);
  }
  if (v4Prefixes[PREFIXES] !== v4Starts.length - 1) wrong.push("IPv4: the last entry is not the last segment");
  if (v6Prefixes[PREFIXES] !== v6Starts.length / 4 - 1) wrong.push("IPv6: the last entry is not the last segment");
  return wrong;
}

const dir = mkdtempSync(join(tmpdir(), "iplookup-prefix-table-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("prefix tables", () => {
  test("agree with a search of the whole table for every prefix, on the default data", () => {
    expect(mismatches(defaultIndex())).toEqual([]);
  });

  test("agree on segments that start on a prefix's first address, just after it, and end just before the next", async () => {
    const v6 = (group: bigint) => group << 112n;
    const sources = writeSmallSources(dir, {
      // 1.0.0.0 is prefix 0x0100's first address; 1.1.0.1 starts one past 0x0101's.
      "asn-4.csv": ["16777216,16842751,13335,One", "16842753,16908287,64500,Two", "4294901760,4294967295,64501,Last"].join("\n"),
      // 2001:: is prefix 0x2001's first address; 2002::1 one past 0x2002's; a segment ends at 2003::ffff… just before 2004::.
      "asn-6.csv": [
        `${v6(0x2001n)},${v6(0x2002n) - 1n},64502,Six`,
        `${v6(0x2002n) + 1n},${v6(0x2004n) - 1n},64503,Seven`,
      ].join("\n"),
    });
    const path = join(dir, "boundaries.db");
    writeDataFile(path, await buildDataSet(sources, new Date("2026-11-01T00:00:00Z")));
    const index = RangeIndex.open(path);
    expect(index.image.v4Starts.length).toBeGreaterThan(3);
    expect(mismatches(index)).toEqual([]);
  });
});

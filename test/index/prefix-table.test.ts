import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ipv6Text, parseAddress } from "../../src/address/parse.ts";
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
  return [...wrong, ...denseMismatches(index)];
}

/**
 * The IPv6 second level: a prefix has one exactly when it holds more than 64 segments,
 * and each of its 256 entries is what a search of the whole table finds for that /24's
 * first address, the 257th the prefix table's next entry.
 */
function denseMismatches(index: RangeIndex): string[] {
  const { v6Starts, v6Prefixes, v6Dense } = index.image;
  const wrong: string[] = [];
  for (let prefix = 0; prefix < PREFIXES; prefix++) {
    const at = v6Dense[prefix]!;
    const dense = v6Prefixes[prefix + 1]! - v6Prefixes[prefix]! > 64;
    if (dense !== (at !== 0)) wrong.push(`IPv6 prefix ${prefix}: ${v6Prefixes[prefix + 1]! - v6Prefixes[prefix]!} segments, second level at ${at}`);
    if (at === 0) continue;
    for (let next = 0; next < 256; next++) {
      const search = lastStartAtOrBelow128(v6Starts, [((prefix << 16) | (next << 8)) >>> 0, 0, 0, 0]);
      if (v6Dense[at + next] !== search) wrong.push(`IPv6 prefix ${prefix}, next bits ${next}: ${v6Dense[at + next]}, search ${search}`);
    }
    if (v6Dense[at + 256] !== v6Prefixes[prefix + 1]) wrong.push(`IPv6 prefix ${prefix}: the second level's last entry is not the next prefix's`);
  }
  return wrong;
}

const dir = mkdtempSync(join(tmpdir(), "iplookup-prefix-table-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("prefix tables", () => {
  test("agree with a search of the whole table for every prefix, on the default data", () => {
    expect(mismatches(defaultIndex())).toEqual([]);
  });

  test("segmentIndex finds the segment a search of the whole table finds, on the default data", () => {
    const index = defaultIndex();
    const { v4Starts, v6Starts } = index.image;
    const wrong: string[] = [];
    let seed = 11;
    const word = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
    for (let n = 0; n < 20_000; n++) {
      const v4 = parseAddress(`${word() >>> 24}.${word() >>> 24}.${word() >>> 24}.${word() >>> 24}`)!;
      // IPv6 in 2000::/3, where the data is; its top 16 bits are those of a dense prefix half the time.
      const top = n % 2 === 0 ? 0x2000 + (word() % 0x2000) : ((v6Starts[(word() % (v6Starts.length / 4)) * 4]! >>> 16) | 0);
      const v6words = [((top << 16) | (word() & 0xffff)) >>> 0, word(), word(), word()];
      const v6 = parseAddress(ipv6Text(v6words))!;
      if (v4.version === 4 && index.segmentIndex(v4) !== lastStartAtOrBelow32(v4Starts, v4.value)) wrong.push(v4.text);
      if (v6.version === 6 && index.segmentIndex(v6) !== lastStartAtOrBelow128(v6Starts, v6.words)) wrong.push(v6.text);
    }
    expect(wrong).toEqual([]);
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

  test("a dense IPv6 prefix answers every address as a search of the whole table does", async () => {
    // 100 segments in 2a00::/16, each starting one past a /24's first address (every other
    // /24) and ending before the next /24, with a record of its own.
    const slash24 = (next: bigint) => ((0x2a00n << 16n) | (next << 8n)) << 96n;
    const rows = Array.from({ length: 100 }, (_, k) => `${slash24(BigInt(2 * k)) + 1n},${slash24(BigInt(2 * k + 1)) - 2n},${65000 + k},Net ${k}`);
    const sources = writeSmallSources(dir, { "asn-6.csv": rows.join("\n") });
    const path = join(dir, "dense.db");
    writeDataFile(path, await buildDataSet(sources, new Date("2026-11-01T00:00:00Z")));
    const index = RangeIndex.open(path);
    const { v6Starts, v6Records, v6Dense } = index.image;
    expect(v6Dense[0x2a00]).toBeGreaterThan(0);
    expect(mismatches(index)).toEqual([]);
    const wrong: string[] = [];
    for (let k = 0; k < 210; k++) {
      const first = slash24(BigInt(k));
      for (const value of [first - 1n, first, first + 1n, first + 2n, slash24(BigInt(k + 1)) - 2n, slash24(BigInt(k + 1)) - 1n]) {
        const words = [0, 1, 2, 3].map((w) => Number((value >> BigInt(96 - 32 * w)) & 0xffffffffn));
        const text = ipv6Text(words);
        const id = v6Records[lastStartAtOrBelow128(v6Starts, words)]!;
        const expected = id === 0 ? null : JSON.stringify(index.record(id));
        const hit = index.lookup(parseAddress(text)!);
        const actual = hit ? JSON.stringify(hit.record) : null;
        if (actual !== expected) wrong.push(`${text}: ${actual}, search ${expected}`);
        const segment = index.segmentIndex(parseAddress(text)!);
        if (segment !== lastStartAtOrBelow128(v6Starts, words)) wrong.push(`${text}: segment ${segment}, search ${lastStartAtOrBelow128(v6Starts, words)}`);
      }
    }
    expect(wrong).toEqual([]);
  });
});

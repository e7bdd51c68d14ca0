import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseAddress } from "../../src/address/parse.ts";
import { buildDataSet } from "../../src/importer/build.ts";
import { writeDataFile } from "../../src/importer/data-file.ts";
import type { SourceSpec } from "../../src/importer/source.ts";
import { RangeIndex } from "../../src/index/range-index.ts";
import { writeSmallSources } from "../support/small-dataset.ts";

// `network` is the largest block on which every field is the same (CONTRACT §1), also
// where two sources, or a source and the data it comes before, give the same answer
// across boundaries of their own.
const dir = mkdtempSync(join(tmpdir(), "iplookup-equal-records-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function csv(name: string, text: string): SourceSpec {
  const path = join(dir, name);
  writeFileSync(path, text);
  return { files: [{ path, format: "country-csv" }] };
}

async function build(name: string, sources: readonly SourceSpec[], base?: string): Promise<RangeIndex> {
  const path = join(dir, name);
  writeDataFile(path, await buildDataSet(sources, new Date("2026-11-01T00:00:00Z"), undefined, base === undefined ? {} : { base }));
  return RangeIndex.open(path);
}

const networkOf = (index: RangeIndex, address: string) => index.lookup(parseAddress(address)!)?.network;

test("two sources saying the same over different blocks: one network", async () => {
  const index = await build("two-sources.db", [csv("half.csv", "1.0.0.0,1.0.0.127,US\n"), csv("whole.csv", "1.0.0.0,1.0.0.255,US\n1.0.1.0,1.0.1.255,DE\n")]);
  expect(networkOf(index, "1.0.0.1")).toBe("1.0.0.0/24");
  expect(networkOf(index, "1.0.0.200")).toBe("1.0.0.0/24");
  expect(networkOf(index, "1.0.1.1")).toBe("1.0.1.0/24");
  expect([...index.segments(4)].map(([start, end]) => [start, end])).toEqual([[0n, 0x00ffffffn], [0x01000000n, 0x010000ffn], [0x01000100n, 0x010001ffn], [0x01000200n, 0xffffffffn]]);
});

test("a source in front of a data file, saying what the file says on part of its block: the file's network", async () => {
  const base = join(dir, "base.db");
  writeDataFile(base, await buildDataSet(writeSmallSources(mkdtempSync(join(dir, "small-"))), new Date("2026-11-01T00:00:00Z")));
  expect(networkOf(RangeIndex.open(base), "8.8.8.8")).toBe("8.8.8.0/24");
  const index = await build("in-front.db", [csv("google-half.csv", "8.8.8.0,8.8.8.127,US\n")], base);
  expect(index.lookup(parseAddress("8.8.8.8")!)).toMatchObject({ network: "8.8.8.0/24", record: { asn: 15169, country_code: "US" } });
  expect(networkOf(index, "8.8.8.200")).toBe("8.8.8.0/24");
});

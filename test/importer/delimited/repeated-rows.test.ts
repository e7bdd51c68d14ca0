import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readDelimited, readDelimitedPacked, type ByteSource } from "../../../src/importer/delimited/read-delimited.ts";
import { readInChild } from "../support/read-in-child.ts";

/**
 * A row that repeats the range of the row before it replaces that row's value (the
 * later row wins there anyway), so one line repeated, which a decompression bomb of
 * valid CSV is, costs one row however long it runs; and a file is read a window at a
 * time, never whole (CONTRACT §13: memory bounded whatever the input).
 */
const dir = mkdtempSync(join(tmpdir(), "iplookup-repeated-rows-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("repeated and alternating rows of one range: the last one's value, every row counted", () => {
  const lines = ["1.0.0.0,1.0.0.255,AU", "1.0.0.0,1.0.0.255,NZ", "2001:db8::,2001:db8::ffff,DE", "1.0.0.0,1.0.0.255,AU", "1.0.0.0,1.0.0.255,NZ", "1.0.1.0,1.0.1.255,US", "1.0.1.0,1.0.1.255,US"];
  const data = readDelimited(`${lines.join("\n")}\n`, { format: "country-csv", file: "c.csv" });
  expect(data.v4.rows).toBe(6);
  expect(data.v6.rows).toBe(1);
  expect(data.v4.ranges.map((range) => data.values[range.value]?.country_code)).toEqual(["NZ", "US"]);
});

test("a ByteSource is read in windows cut at line ends, and gives what the bytes give", () => {
  const text = Array.from({ length: 120_000 }, (_, i) => `1.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255},1.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255},${i % 2 ? "AU" : "NZ"}`).join("\n");
  const bytes = new TextEncoder().encode(text);
  const asked: number[] = [];
  const source: ByteSource = { length: bytes.length, window: (from, length) => (asked.push(length), bytes.slice(from, from + length)) };
  const whole = readDelimitedPacked(bytes, { format: "country-csv", file: "c.csv" });
  const windowed = readDelimitedPacked(source, { format: "country-csv", file: "c.csv" });
  expect(windowed).toEqual(whole);
  expect(asked.length).toBeGreaterThan(1);
  expect(Math.max(...asked)).toBeLessThanOrEqual(1 << 20);
});

test("64 MiB of one valid line repeated: read in a fraction of its size", async () => {
  const file = join(dir, "repeated.csv");
  const line = "1.0.0.0,1.0.0.255,AU\n";
  const block = line.repeat(50_000);
  const writer = Bun.file(file).writer();
  for (let written = 0; written < 64 * 2 ** 20; written += block.length) writer.write(block);
  await writer.end();
  const result = await readInChild(file);
  expect(result.error).toBeNull();
  expect(result.maxRssBytes).toBeLessThan(160 * 2 ** 20);
});

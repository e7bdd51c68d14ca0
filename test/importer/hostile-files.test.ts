import { afterAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MAX_LINE_LENGTH, readDelimited } from "../../src/importer/delimited/read-delimited.ts";
import { DELIMITED_FORMATS } from "../../src/importer/delimited/formats.ts";
import { detectFormat } from "../../src/importer/detect-format.ts";
import { readMmdb } from "../../src/importer/mmdb/read-mmdb.ts";
import { double, writeMmdb } from "../support/mmdb-writer.ts";
import { readInChild } from "./support/read-in-child.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-hostile-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Whatever bytes a data file holds, reading it either gives data or throws an Error that
 * names the file: never another kind of exception, never a hang (each case is bounded by
 * the test's timeout).
 */
function readsOrNamesTheFile(read: () => unknown, file: string): void {
  try {
    read();
  } catch (error) {
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message.startsWith(`${file}`)).toBe(true);
  }
}

const base = writeMmdb({
  ipVersion: 6,
  recordSize: 28,
  databaseType: "GeoLite2-City",
  networks: [
    { network: "1.0.0.0/24", value: { country: { iso_code: "AU" }, city: { names: { en: "Brisbane" } }, location: { latitude: double(-27.4679), longitude: double(153.0281) } } },
    { network: "8.8.8.0/25", value: { country: { iso_code: "US" } } },
    { network: "2001:4860::/32", value: { country: { iso_code: "US" }, subdivisions: [{ names: { en: "California" } }] } },
  ],
}).bytes;

test("MMDB files with random bytes changed, and cut inside their metadata", () => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.nat(base.byteLength - 1), fc.nat(255)), { minLength: 1, maxLength: 8 }),
      fc.nat(base.byteLength),
      (flips, cut) => {
        const bytes = base.slice(0, Math.max(cut, base.byteLength - 64));
        for (const [at, value] of flips) if (at < bytes.byteLength) bytes[at] = value;
        readsOrNamesTheFile(() => readMmdb(bytes, "fuzzed.mmdb"), "fuzzed.mmdb");
        readsOrNamesTheFile(() => detectFormat({ head: bytes, tail: bytes }, "fuzzed.mmdb"), "fuzzed.mmdb");
      },
    ),
    { numRuns: 3_000 },
  );
});

test("delimited files with random lines, in every layout", () => {
  const line = fc.oneof(
    fc.string(),
    fc.array(fc.oneof(fc.constantFrom("1.0.0.0", "1.0.0.255", "::1", "2001:db8::", "16777216", "-1", "", '"', "AU", "13335", "x,y", "1e3", "NaN"), fc.string()), { maxLength: 11 }).map((fields) => fields.join(",")),
    fc.array(fc.string(), { maxLength: 6 }).map((fields) => fields.join("\t")),
  );
  fc.assert(
    fc.property(fc.constantFrom(...DELIMITED_FORMATS), fc.array(line, { maxLength: 6 }), fc.constantFrom(undefined, 4 as const, 6 as const), fc.boolean(), (format, lines, family, crlf) => {
      const text = lines.join(crlf ? "\r\n" : "\n");
      readsOrNamesTheFile(() => readDelimited(text, { format, file: "fuzzed.csv", family }), "fuzzed.csv");
      readsOrNamesTheFile(() => readDelimited(new TextEncoder().encode(text), { format, file: "fuzzed.csv", family }), "fuzzed.csv");
      readsOrNamesTheFile(() => detectFormat({ head: new TextEncoder().encode(text) }, "fuzzed.csv"), "fuzzed.csv");
    }),
    { numRuns: 3_000 },
  );
});

describe("delimited files with absurd lines: refused at the line, after a scan", () => {
  const good = "1.0.0.0,1.0.0.255,13335,Cloudflare\n";
  const cases: Array<[string, string, RegExp]> = [
    ["a field of 10 MB", `${good}${good}1.0.1.0,1.0.1.255,1,"${"x".repeat(10_000_000)}"\n${good}`, /absurd\.csv:3: the line is/],
    ["two million columns", `${good}1.0.1.0,1.0.1.255,${"1,".repeat(2_000_000)}\n`, /absurd\.csv:2: the line is/],
    ["a start of a million digits", `${"1".repeat(1_000_000)},2,3,x\n`, /absurd\.csv:1: the line is/],
    ["a line just too long", `${good}1.0.1.0,1.0.1.255,1,${"x".repeat(MAX_LINE_LENGTH)}\n`, /absurd\.csv:2: the line is 65,5\d\d characters long; a data line has at most 65,536/],
    ["a line as long as allowed, but with too many columns", `1.0.1.0,1.0.1.255,${"1,".repeat(30_000)}\n`, /absurd\.csv:1: expected 4 fields \(start,end,autonomous_system_number,autonomous_system_organization\), found 30003/],
  ];
  test.each(cases)("%s, as text and as bytes", (_name, text, reason) => {
    expect(() => readDelimited(text, { format: "asn-csv", file: "absurd.csv" })).toThrow(reason);
    expect(() => readDelimited(new TextEncoder().encode(text), { format: "asn-csv", file: "absurd.csv" })).toThrow(reason);
  });

  test("TSV: a field of 10 MB", () => {
    const text = `1.0.0.0\t1.0.0.255\t13335\tUS\t${"x".repeat(10_000_000)}\n`;
    expect(() => readDelimited(new TextEncoder().encode(text), { format: "iptoasn-tsv", file: "absurd.tsv" })).toThrow(/absurd\.tsv:1: the line is longer than 1,048,576 bytes/);
  });

  test("bytes that are not UTF-8 are named by their line, also past the first megabyte", () => {
    const lines = Array.from({ length: 40_000 }, (_, i) => `${i * 256},${i * 256 + 255},${i},Réseau ${i}`);
    const bytes = new TextEncoder().encode(`${lines.join("\n")}\n`);
    expect(bytes.length).toBeGreaterThan(1 << 20);
    const read = readDelimited(bytes, { format: "asn-csv", file: "big-ipv4.csv" });
    expect(read.v4.rows).toBe(40_000);
    expect(read).toEqual(readDelimited(`${lines.join("\n")}\n`, { format: "asn-csv", file: "big-ipv4.csv" }));
    const at = new TextEncoder().encode(`${lines.slice(0, 30_000).join("\n")}\n`).length + 5;
    const damaged = bytes.slice();
    damaged[at] = 0xff;
    expect(() => readDelimited(damaged, { format: "asn-csv", file: "big-ipv4.csv" })).toThrow("big-ipv4.csv:30001: not UTF-8 text");
  });

  test("in a process of its own: a 100 MB line is refused at line 2, and memory stays near the file's size", async () => {
    const file = join(dir, "long-line.csv");
    const line = Buffer.alloc(100 * 1024 * 1024, "7");
    writeFileSync(file, Buffer.concat([Buffer.from(good), line, Buffer.from("\n")]));
    const result = await readInChild(file, "asn-csv");
    expect(result.error).toMatch(/long-line\.csv:2: the line is longer than 1,048,576 bytes/);
    console.log(`a 100 MB line: refused, peak RSS ${(result.maxRssBytes / 2 ** 20).toFixed(0)} MiB`);
    expect(result.maxRssBytes).toBeLessThan(300 * 2 ** 20); // the file's bytes (100 MiB) and the runtime
  });
});

test("files cut short at every length: a value or an error naming the file and line", () => {
  const text = ["1.0.0.0,1.0.0.255,13335,\"Cloudflare, Inc.\"", "2001:db8::,2001:db8::ffff,64500,Example", "8.8.8.0,8.8.8.255,15169,Google LLC"].join("\n");
  for (let cut = 0; cut <= text.length; cut++) {
    const bytes = new TextEncoder().encode(text.slice(0, cut));
    try {
      readDelimited(bytes, { format: "asn-csv", file: "cut.csv" });
    } catch (error) {
      expect((error as Error).message).toMatch(/^cut\.csv:[123]: /);
    }
  }
});

import { expect, test } from "bun:test";
import fc from "fast-check";
import { readDelimited } from "../../src/importer/delimited/read-delimited.ts";
import { DELIMITED_FORMATS } from "../../src/importer/delimited/formats.ts";
import { detectFormat } from "../../src/importer/detect-format.ts";
import { readMmdb } from "../../src/importer/mmdb/read-mmdb.ts";
import { double, writeMmdb } from "../support/mmdb-writer.ts";

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
      readsOrNamesTheFile(() => detectFormat({ head: new TextEncoder().encode(text) }, "fuzzed.csv"), "fuzzed.csv");
    }),
    { numRuns: 3_000 },
  );
});

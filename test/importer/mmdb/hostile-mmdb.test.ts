import { afterAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as decoderModule from "mmdb-lib/lib/decoder";
import { DataDecoder, DecodeError, DecodeLimitError, FILE_READ_FACTOR, MAX_DEPTH } from "../../../src/importer/mmdb/data-decoder.ts";
import { readMmdb } from "../../../src/importer/mmdb/read-mmdb.ts";
import * as d from "./data-bytes.ts";
import { readInChild } from "../support/read-in-child.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-hostile-mmdb-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// mmdb-lib's decoder, as the reference for what valid data decodes to. Its modules are
// CommonJS with `exports.default`, which Bun hands over as the default or inside it.
const reference = decoderModule as unknown as { default: unknown };
const ReferenceDecoder = (typeof reference.default === "function" ? reference.default : (reference.default as { default: unknown }).default) as new (
  db: Buffer,
  base: number,
) => { decode(offset: number): { value: unknown; offset: number } };

/** Maps and arrays as plain data (the decoder's maps have no prototype), buffers as arrays. */
function plain(value: unknown): unknown {
  if (value instanceof Uint8Array) return { bytes: [...value] };
  if (Array.isArray(value)) return value.map(plain);
  if (typeof value === "object" && value !== null) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, plain(item)]));
  return value;
}

function refused(bytes: Uint8Array, reason: RegExp): void {
  expect(() => readMmdb(bytes, "hostile.mmdb")).toThrow(reason);
  try {
    readMmdb(bytes, "hostile.mmdb");
  } catch (error) {
    expect((error as Error).message.startsWith("hostile.mmdb: ")).toBe(true);
  }
}

describe("the data decoder gives what mmdb-lib's gives for valid data", () => {
  // Values written one after another; a later one may point at an earlier one.
  const scalar = fc.oneof(
    fc.string({ maxLength: 40 }).map((text) => d.string(text)),
    fc.string({ minLength: 29, maxLength: 400 }).map((text) => d.string(text)),
    fc.nat(0xffff).map((n) => d.uint(5, n)),
    fc.nat().map((n) => d.uint(6, n)),
    fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }).map((n) => d.uint(9, n)),
    fc.bigInt({ min: 0n, max: (1n << 128n) - 1n }).map((n) => d.uint(10, n)),
    fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }).map((n) => d.int32(n)),
    fc.double({ noNaN: true }).map((n) => d.double(n)),
    fc.float({ noNaN: true }).map((n) => d.float(n)),
    fc.boolean().map((b) => d.boolean(b)),
    fc.array(fc.nat(255), { maxLength: 10 }).map((b) => d.bytes(b)),
  );
  const tree = fc.letrec<{ value: number[] }>((tie) => ({
    value: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      scalar,
      fc.array(tie("value"), { maxLength: 5 }).map((items) => d.array(items)),
      fc.array(fc.tuple(fc.string({ maxLength: 8 }), tie("value")), { maxLength: 5 }).map((entries) => {
        const unique = [...new Map(entries).entries()];
        return d.map(unique.map(([key, value]) => [d.string(key), value] as const));
      }),
    ),
  })).value;

  test("random values, some reached through pointers to earlier ones", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(tree, fc.nat(100)), { minLength: 1, maxLength: 8 }), (pieces) => {
        const data: number[] = [];
        const offsets: number[] = [];
        for (const [value, choice] of pieces) {
          offsets.push(data.length);
          // Some values are a map whose one entry points at an earlier value.
          if (choice % 3 === 0 && offsets.length > 1) data.push(...d.map([[d.string("p"), d.pointer(offsets[choice % (offsets.length - 1)]!)]]));
          else data.push(...value);
        }
        const bytes = Uint8Array.from(data);
        const ours = new DataDecoder(bytes, 0, bytes.length, "the data section");
        const theirs = new ReferenceDecoder(Buffer.from(bytes), 0);
        for (const offset of offsets) expect(plain(ours.decode(offset))).toEqual(plain(theirs.decode(offset).value));
      }),
      { numRuns: 1_000 },
    );
  });

  test("pointers of every size", () => {
    for (const offset of [0, 2047, 2048, 526335, 526336, 134744063, 134744064]) {
      const data = Uint8Array.from(d.pointer(offset));
      const decoder = new DataDecoder(data, 0, data.length, "the data section");
      // Every one points past these few bytes: the error says so, with no other exception.
      expect(() => decoder.decode(0)).toThrow(DecodeError);
    }
    const padded = new Uint8Array(526340);
    padded.set(d.string("far"), 526336);
    padded.set(d.pointer(526336), 0);
    expect(new DataDecoder(padded, 0, padded.length, "the data section").decode(0)).toBe("far");
  });
});

describe("hostile data is refused within bounded work", () => {
  test("arrays of 16 pointers to the level below, 8 levels: 16^8 strings from a few hundred bytes", () => {
    const data = d.sharedLevels(8, 16);
    expect(data.length).toBeLessThan(400);
    refused(d.rawMmdb(data), /hostile\.mmdb: the data at offset 0 decodes to more than 2,097,152 bytes of reads \(maps or arrays that point at the same data over and over\); refused as damaged or hostile/);
  });

  test("maps do the same", () => {
    refused(d.rawMmdb(d.sharedLevels(8, 16, "map")), /hostile\.mmdb: the data at offset 0 decodes to more than/);
  });

  test("the metadata does the same", () => {
    refused(
      d.rawMmdb(d.string("x"), { metadataValue: (at) => d.sharedLevels(8, 16, "array", at) }),
      /hostile\.mmdb: truncated or damaged: the metadata cannot be read \(it decodes to more than 2,097,152 bytes of reads/,
    );
  });

  test("a pointer to itself, and a pointer cycle through a map", () => {
    refused(d.rawMmdb(d.pointer(0)), new RegExp(`hostile\\.mmdb: truncated or damaged: the data at offset 0 is nested deeper than ${MAX_DEPTH} levels`));
    refused(d.rawMmdb(d.map([[d.string("self"), d.pointer(0)]])), /nested deeper than/);
  });

  test("a claimed size far beyond the data: an array of 16 million, a string of 16 MB", () => {
    refused(d.rawMmdb(d.control(11, 16_843_036)), /hostile\.mmdb: truncated or damaged: the data at offset 0 runs past the data section/);
    refused(d.rawMmdb(d.control(2, 16_843_036)), /runs past the data section/);
  });

  test("a data section decoded over and over by many records stops at its limit", () => {
    // Each decode reads about 2 × 16^4 bytes of pointers; the limit for the whole section
    // (here 1 MiB + 64 × its size) is reached after a few.
    const data = Uint8Array.from(d.sharedLevels(4, 16));
    const decoder = new DataDecoder(data, 0, data.length, "the data section", { fileAllowance: 1 << 20 });
    let decodes = 0;
    expect(() => {
      for (;;) {
        decoder.decode(0);
        decodes++;
      }
    }).toThrow(DecodeLimitError);
    expect(decodes).toBeGreaterThan(0);
    expect(decoder.bytesRead).toBeLessThanOrEqual((1 << 20) + FILE_READ_FACTOR * data.length + 16);
  });

  test("random sections of pointers, maps and arrays: a value or an error, never more than the limit", () => {
    const piece = fc.oneof(
      fc.nat(60).map((at) => d.pointer(at)),
      fc.nat(20).map((n) => d.control(11, n)),
      fc.nat(20).map((n) => d.control(7, n)),
      fc.string({ maxLength: 4 }).map((text) => d.string(text)),
      fc.constant(d.uint(5, 1)),
    );
    fc.assert(
      fc.property(fc.array(piece, { minLength: 1, maxLength: 30 }), (pieces) => {
        const data = Uint8Array.from(pieces.flat());
        const decoder = new DataDecoder(data, 0, data.length, "the data section", { record: 64 * 1024 });
        try {
          decoder.decode(0);
        } catch (error) {
          if (!(error instanceof DecodeError) && !(error instanceof DecodeLimitError)) throw error;
        }
        expect(decoder.bytesRead).toBeLessThanOrEqual(64 * 1024 + 8);
      }),
      { numRuns: 2_000 },
    );
  });

  test("in a process of its own: the 16 × 8 file is refused, and memory stays small", async () => {
    const file = join(dir, "levels.mmdb");
    writeFileSync(file, d.rawMmdb(d.sharedLevels(8, 16)));
    const result = await readInChild(file);
    expect(result.error).toMatch(/levels\.mmdb: the data at offset 0 decodes to more than/);
    console.log(`the 16 × 8 MMDB: refused, peak RSS ${(result.maxRssBytes / 2 ** 20).toFixed(0)} MiB`);
    expect(result.maxRssBytes).toBeLessThan(200 * 2 ** 20);
  });
});

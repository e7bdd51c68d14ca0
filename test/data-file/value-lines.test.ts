import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { checkValueLines } from "../../src/data-file/value-lines.ts";
import { NO_SIGNALS, privacyOf } from "../../src/index/privacy.ts";
import type { RecordField } from "../../src/index/record-fields.ts";

const encoder = new TextEncoder();

/** The table's starts as the range index finds them (one value a line). */
function startsOf(bytes: Uint8Array): Uint32Array {
  const starts = [0];
  bytes.forEach((byte, i) => byte === 0x0a && starts.push(i + 1));
  starts.push(bytes.length + 1);
  return new Uint32Array(starts);
}

/** The error checkValueLines throws for a table of these lines, or null when it takes them. */
function verdict(field: RecordField, lines: ReadonlyArray<string | Uint8Array>): string | null {
  const parts = lines.map((line) => (typeof line === "string" ? encoder.encode(line) : line));
  const bytes = new Uint8Array(parts.reduce((sum, part) => sum + part.length + 1, -1));
  let at = 0;
  parts.forEach((part, i) => {
    bytes.set(part, at);
    at += part.length;
    if (i < parts.length - 1) bytes[at++] = 0x0a;
  });
  try {
    checkValueLines(field, bytes, startsOf(bytes));
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

/**
 * What the check must say of one line, from JSON.parse: UTF-8, one JSON value with no
 * space around it, of the field's type.
 */
function oracle(kind: "string" | "number" | "asn", line: Uint8Array): boolean {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(line);
  } catch {
    return false;
  }
  if (/^[ \t\r]|[ \t\r]$/.test(text)) return false;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return false;
  }
  if (value === null) return true;
  if (kind === "string") return typeof value === "string";
  if (kind === "number") return typeof value === "number";
  return /^(0|[1-9][0-9]*)$/.test(text) && Number(text) <= 0xffffffff;
}

describe("each line of a values table is one JSON value of its field's type", () => {
  test("strings", () => {
    for (const line of ['"Cloudflare, Inc."', "null", '""', '"a\\"b"', '"\\\\"', '"\\u00e9\\uD800\\/\\b\\f\\n\\r\\t"', '"Zürich"', '"日本"', JSON.stringify("\u0001 \u2028 😀")]) {
      expect(verdict("as_name", ['"first"', line])).toBeNull();
    }
    for (const line of ['"Cloudf"lare, Inc."', '"abc\\"', '"abc', 'abc"', '"', "", " ", '"a" ', ' "a"', '"a"\r', "nul", "null ", "Null", "13335", "{}", "[]", "true", '"a\tb"', '"\\x41"', '"\\u12g4"', '"\\u123"', '"\\', '"a","b"', '"a"\u0000']) {
      expect(verdict("as_name", ['"first"', line])).toBe("the data file is damaged: line 2 of its values:as_name table is not a JSON string or null");
    }
    // Not UTF-8: a lone continuation byte, an overlong encoding, a surrogate encoded.
    for (const bytes of [[0x22, 0x80, 0x22], [0x22, 0xc0, 0xaf, 0x22], [0x22, 0xed, 0xa0, 0x80, 0x22]]) {
      expect(verdict("city", ['"x"', '"y"', new Uint8Array(bytes)])).toBe("the data file is damaged: line 3 of its values:city table is not UTF-8 text");
    }
  });

  test("AS numbers and coordinates", () => {
    for (const line of ["0", "13335", "4294967295", "null"]) expect(verdict("asn", [line])).toBeNull();
    for (const line of ["4294967296", "99999999999", "-1", "013335", "13335.0", "1e3", '"13335"', " 13335", "", "true"]) {
      expect(verdict("asn", ["1", line])).toBe("the data file is damaged: line 2 of its values:asn table is not an AS number (an integer 0–4294967295) or null");
    }
    for (const line of ["0", "-0", "51.5074", "-0.1278", "1e-7", "1E+2", "12.5e3", "null"]) expect(verdict("latitude", [line])).toBeNull();
    for (const line of ["01", "1.", ".5", "+1", "1e", "1e+", "--1", "-", "NaN", "Infinity", "1 ", '"1"', "0x10", ""]) {
      expect(verdict("longitude", ["0", line])).toBe("the data file is damaged: line 2 of its values:longitude table is not a JSON number or null");
    }
  });

  test("privacy objects: as JSON.stringify writes a Privacy, and nothing else", () => {
    const amazon = JSON.stringify(privacyOf({ hosting: true, tor: false }, "Amazon EC2 (us-east-1)"));
    expect(verdict("privacy", [JSON.stringify(NO_SIGNALS), amazon])).toBeNull();
    for (const line of [
      "null",
      "{}",
      amazon.replace("{", "{ "),
      amazon.replace('"tor":false', '"tor":"no"'),
      amazon.replace('"service":"Amazon EC2 (us-east-1)"', '"service":1'),
      amazon.replace("}", ',"extra":1}'),
      amazon.replace('"hosting":true,"tor":false', '"tor":false,"hosting":true'),
      amazon.replace('"hosting":true', '"hosting":true,"hosting":true'),
      amazon.slice(0, -1),
    ]) {
      expect(verdict("privacy", [amazon, line])).toBe("the data file is damaged: line 2 of its values:privacy table is not a privacy object as iplookup writes it");
    }
  });

  test("the first line that is not a value is named, whatever is wrong with the lines after it", () => {
    expect(verdict("as_name", ['"ok"', '"a\\x"', "abc"])).toMatch(/line 2 /);
    expect(verdict("as_name", ['"ok"', "abc", '"a\\x"'])).toMatch(/line 2 /);
    expect(verdict("as_name", ['"ok"', '"ok"', '"\u0001"', '"a"b"'])).toMatch(/line 3 /);
    expect(verdict("asn", ["1", "4294967296", "x"])).toMatch(/line 2 /);
    expect(verdict("asn", ["1", "x", "4294967296"])).toMatch(/line 2 /);
    expect(verdict("latitude", ["1", "2", "3", "1.", "x"])).toMatch(/line 4 /);
    expect(verdict("latitude", ["1", "2", "3", ""])).toMatch(/line 4 /);
  });

  test("an empty table is no values; a table of one empty line is refused", () => {
    const empty = new Uint8Array(0);
    expect(() => checkValueLines("as_name", empty, new Uint32Array([1]))).not.toThrow();
    expect(() => checkValueLines("as_name", empty, new Uint32Array([0, 1]))).toThrow(/line 1 of its values:as_name table is not a JSON string or null/);
  });

  test("the check agrees with JSON.parse on lines made of JSON's own characters, random bytes and mutated values", () => {
    const alphabet = ['"', "\\", "u", "0", "1", "9", "a", "F", "g", "/", "b", "n", "t", "e", "E", "+", "-", ".", "l", " ", "\t", "\r", "é", "\u0001", "\u007f", ",", "{", "}", "[", "]"];
    const jsonish = fc.array(fc.constantFrom(...alphabet), { maxLength: 12 }).map((chars) => encoder.encode(chars.join("")));
    const valid = fc.oneof(
      // UTF-16 code units: controls, quotes, lone surrogates and the rest, as JSON.stringify escapes them.
      fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 8 }).map((units) => encoder.encode(JSON.stringify(String.fromCharCode(...units)))),
      fc.double().map((n) => encoder.encode(JSON.stringify(n))),
      fc.integer({ min: 0, max: 0xffffffff }).map((n) => encoder.encode(String(n))),
    );
    const mutated = fc.tuple(valid, fc.nat(), fc.integer({ min: 0, max: 255 })).map(([bytes, at, byte]) => {
      const copy = bytes.slice();
      if (copy.length > 0) copy[at % copy.length] = byte === 0x0a ? 0x0b : byte;
      return copy;
    });
    // Quoted text of escapes (good and bad), hex digits, quotes and, now and then, a control character.
    const printable = fc.constantFrom("\\", '"', "u", "0", "a", "F", "g", "/", "b", "f", "n", "r", "t", "x", "U", "'", " ", "é");
    const control = fc.integer({ min: 0, max: 0x1f }).filter((code) => code !== 0x0a).map((code) => String.fromCharCode(code));
    const quoted = fc
      .array(fc.oneof({ arbitrary: printable, weight: 12 }, { arbitrary: control, weight: 1 }), { maxLength: 10 })
      .map((chars) => encoder.encode(`"${chars.join("")}"`));
    const line = fc.oneof(jsonish, quoted, valid, mutated, fc.uint8Array({ maxLength: 8 }).map((bytes) => bytes.map((byte) => (byte === 0x0a ? 0x20 : byte))));
    const fields: Array<["string" | "number" | "asn", RecordField]> = [
      ["string", "as_name"],
      ["number", "latitude"],
      ["asn", "asn"],
    ];
    fc.assert(
      fc.property(line, (bytes) => {
        for (const [kind, field] of fields) {
          if ((verdict(field, [bytes]) === null) !== oracle(kind, bytes)) throw new Error(`${field}: ${JSON.stringify(new TextDecoder().decode(bytes))} ${[...bytes]}`);
        }
      }),
      { numRuns: 20_000 },
    );
  });
});

import { expect, test } from "bun:test";
import { csvLines, parseCsvLine } from "../../src/importer/csv.ts";

test.each([
  ["1,2,13335,Cloudflare", ["1", "2", "13335", "Cloudflare"]],
  ['1,2,13335,"Cloudflare, Inc."', ["1", "2", "13335", "Cloudflare, Inc."]],
  ['1,2,7,"The ""Best"" ISP"', ["1", "2", "7", 'The "Best" ISP']],
  ['1,2,7,""', ["1", "2", "7", ""]],
  ["1,2,AU", ["1", "2", "AU"]],
  ["1,2,", ["1", "2", ""]],
  ['"1",2', ["1", "2"]],
])("%p", (line, fields) => {
  expect(parseCsvLine(line)).toEqual(fields);
});

test("malformed quoting is an error", () => {
  expect(() => parseCsvLine('1,2,"open')).toThrow(/unterminated/);
  expect(() => parseCsvLine('1,"a"b,3')).toThrow(/after a quoted field/);
});

test("lines: LF and CRLF, blank lines skipped, numbers kept", () => {
  expect([...csvLines("a\r\nb\n\nc")]).toEqual([["a", 1], ["b", 2], ["c", 4]]);
});

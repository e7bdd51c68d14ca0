import { expect, test } from "bun:test";
import { isJsonMediaType } from "../../src/http/media-type.ts";

test.each([
  ["application/json", true],
  ["Application/JSON", true],
  ["application/json; charset=utf-8", true],
  ["application/json;charset=UTF-8", true],
  ['application/json; charset="utf-8"', true],
  ["application/json; charset=latin1", false],
  ["application/json; foo=bar", false],
  ["text/plain", false],
  ["application/x-www-form-urlencoded", false],
  ["application/jsonx", false],
  ["", false],
  [null, false],
])("%p is JSON: %p", (contentType, expected) => {
  expect(isJsonMediaType(contentType)).toBe(expected);
});

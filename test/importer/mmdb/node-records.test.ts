import { expect, test } from "bun:test";
import walker from "mmdb-lib/lib/reader/walker";
import { leftRecord, rightRecord } from "../../../src/importer/mmdb/node-records.ts";
import { random } from "./support.ts";

test.each([24, 28, 32] as const)("records of size %d read as mmdb-lib's walker reads them", (recordSize) => {
  const next = random(recordSize);
  const bytes = Buffer.alloc(8 * 4096);
  for (let i = 0; i < bytes.length; i++) bytes[i] = i < 64 ? 0xff : Math.floor(next() * 256);
  const reference = walker(bytes, recordSize);
  const nodeByteSize = recordSize / 4;
  const mismatches: number[] = [];
  for (let offset = 0; offset + nodeByteSize <= bytes.length; offset += nodeByteSize) {
    if (leftRecord(bytes, recordSize, offset) !== reference.left(offset) || rightRecord(bytes, recordSize, offset) !== reference.right(offset)) mismatches.push(offset);
  }
  expect(mismatches).toEqual([]);
  expect(leftRecord(bytes, recordSize, 0)).toBe(2 ** recordSize - 1);
  expect(rightRecord(bytes, recordSize, 0)).toBe(2 ** recordSize - 1);
});

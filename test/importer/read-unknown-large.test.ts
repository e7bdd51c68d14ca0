import { afterAll, expect, test } from "bun:test";
import { closeSync, mkdtempSync, openSync, rmSync, ftruncateSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readInChild } from "./support/read-in-child.ts";

/**
 * A file that is no data file is refused from its head and tail, not after it was read
 * whole: 512 MiB of zeros (what a crafted archive may unpack to within the bounds of
 * CONTRACT §13) costs the reader next to no memory.
 */
const dir = mkdtempSync(join(tmpdir(), "iplookup-read-unknown-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("512 MiB of zeros: 'cannot tell the format', with a peak far below the file's size", async () => {
  const file = join(dir, "zeros.csv");
  // Sparse: the zeros take no disk.
  const fd = openSync(file, "w");
  ftruncateSync(fd, 512 * 2 ** 20);
  closeSync(fd);
  const result = await readInChild(file);
  expect(result.error).toContain(`${file}: cannot tell the format`);
  expect(result.maxRssBytes).toBeLessThan(256 * 2 ** 20);
});

import { afterAll, expect, test } from "bun:test";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { asnIndexOf } from "../../src/asn/asn-index.ts";
import { defaultDataPath } from "../../src/config/paths.ts";
import { LiveIndex } from "../../src/index/live-index.ts";
import { RangeIndex } from "../../src/index/range-index.ts";

/**
 * The AS index is built with the range index when a server loads (and reloads) its data,
 * into the image that is posted to worker threads; what a worker receives shares the
 * memory (SharedArrayBuffers) and is not built again.
 */

const dir = mkdtempSync(join(tmpdir(), "iplookup-asn-shared-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("LiveIndex builds the AS index after the first load when asked, and with every reload; a posted image carries it, shared, and it is not built again", async () => {
  const path = join(dir, "data.db");
  copyFileSync(defaultDataPath(), path);
  const live = new LiveIndex(path);
  const first = live.current();
  // Start-up does not wait for it; the server asks for it once it answers.
  expect(first.image.asn).toBeUndefined();
  await live.buildAsnIndex();
  const image = first.image.asn;
  expect(image).toBeDefined();
  for (const array of Object.values(image!)) if (array !== null) expect((array as Uint8Array).buffer).toBeInstanceOf(SharedArrayBuffer);

  // What postMessage does to the image: a structured clone, whose SharedArrayBuffers are the same memory.
  const received = structuredClone(first.image);
  const inWorker = asnIndexOf(RangeIndex.fromImage(received));
  expect(inWorker.image).toBe(received.asn!);
  const names = image!.names;
  const saved = names[0] as number;
  names[0] = saved ^ 0xff;
  expect(received.asn!.names[0]).toBe(names[0]);
  names[0] = saved;
  expect(inWorker.result(13335)).toEqual(asnIndexOf(first).result(13335));

  expect(await live.reload()).toBe(true);
  const second = live.current();
  expect(second).not.toBe(first);
  expect(second.image.asn).toBeDefined();
  expect(second.image.asn).not.toBe(image);
});

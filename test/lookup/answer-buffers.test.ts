import { expect, test } from "bun:test";
import { AnswerBuffers } from "../../src/lookup/answer-buffers.ts";
import { LookupService } from "../../src/lookup/lookup-service.ts";
import { defaultIndex } from "../support/default-data.ts";

test("a buffer given back is lent again to an answer it fits, the last given back first", () => {
  const buffers = new AnswerBuffers();
  const small = buffers.take(100);
  const large = buffers.take(10_000);
  expect(small.byteLength).toBeGreaterThanOrEqual(100);
  expect(large.byteLength).toBeGreaterThanOrEqual(10_000);
  buffers.give(large);
  buffers.give(small);
  expect(buffers.take(50)).toBe(small);
  // Too small for this one: the large one is lent, and after it a new buffer.
  buffers.give(small);
  expect(buffers.take(5_000)).toBe(large);
  const fresh = buffers.take(5_000);
  expect(fresh).not.toBe(large);
  expect(fresh).not.toBe(small);
  expect(buffers.kept).toEqual({ buffers: 1, bytes: small.byteLength });
});

test("buffers kept are bounded in count and in bytes", () => {
  const byCount = new AnswerBuffers(2, 1 << 20);
  for (let i = 0; i < 5; i++) byCount.give(new Uint8Array(10));
  expect(byCount.kept).toEqual({ buffers: 2, bytes: 20 });
  const byBytes = new AnswerBuffers(10, 1000);
  byBytes.give(new Uint8Array(600));
  byBytes.give(new Uint8Array(600));
  byBytes.give(new Uint8Array(400));
  expect(byBytes.kept).toEqual({ buffers: 2, bytes: 1000 });
});

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

test("answers in flight never share bytes; a released answer's buffer serves the next one", () => {
  const index = defaultIndex();
  const service = new LookupService(() => index);
  const batch = (first: number) => service.resolve(Array.from({ length: 200 }, (_, i) => `${first}.${i % 256}.${(i * 7) % 256}.1`));
  const [eights, thirtyOnes, fortyFives] = [batch(8), batch(31), batch(45)];
  const expected = (addresses: typeof eights) => JSON.stringify({ results: service.lookup(addresses) });

  const a = service.lookupJson(eights, true);
  const b = service.lookupJson(thirtyOnes, true);
  expect(b.body.buffer).not.toBe(a.body.buffer);
  expect(text(a.body)).toBe(expected(eights));
  expect(text(b.body)).toBe(expected(thirtyOnes));

  a.release();
  a.release(); // a second release gives nothing back twice
  const c = service.lookupJson(fortyFives, true);
  expect(c.body.buffer).toBe(a.body.buffer);
  expect(text(c.body)).toBe(expected(fortyFives));
  expect(text(b.body)).toBe(expected(thirtyOnes));
  const d = service.lookupJson(eights, true);
  expect(d.body.buffer).not.toBe(c.body.buffer);
  expect(text(d.body)).toBe(expected(eights));
});

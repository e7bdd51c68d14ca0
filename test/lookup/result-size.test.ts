import { expect, test } from "bun:test";
import { FIRST_RESULT_BYTES, nextResultBytes } from "../../src/lookup/result-size.ts";
import { LookupService } from "../../src/lookup/lookup-service.ts";
import { defaultIndex } from "../support/default-data.ts";

test("an answer with larger results raises the estimate past their average at once", () => {
  expect(nextResultBytes(192, 256_000, 1000)).toBe(288);
  expect(nextResultBytes(192, 300, 1)).toBe(338);
});

test("smaller results lower it by a sixteenth of the gap, never below their average with its headroom", () => {
  expect(nextResultBytes(400, 100_000, 1000)).toBe(400 - Math.floor((400 - 113) / 16));
  let estimate = 400;
  for (let i = 0; i < 500; i++) estimate = nextResultBytes(estimate, 100_000, 1000);
  expect(estimate).toBeGreaterThanOrEqual(113);
  expect(estimate).toBeLessThan(130);
});

test("an answer with no results leaves it as it was", () => {
  expect(nextResultBytes(FIRST_RESULT_BYTES, 0, 0)).toBe(FIRST_RESULT_BYTES);
});

test("after one batch the lookup service's writer holds the next like batch without growing", () => {
  const index = defaultIndex();
  const service = new LookupService(() => index);
  const addresses = service.resolve(Array.from({ length: 500 }, (_, i) => i % 4 === 3 ? `2a0${i % 10}:${i.toString(16)}::1` : `${[8, 31, 45, 62, 81, 151][i % 6]}.${i % 256}.${(i * 7) % 256}.1`));
  const first = service.lookupJson(addresses, true).body;
  const second = service.lookupJson(addresses, true).body;
  expect(new TextDecoder().decode(second)).toBe(new TextDecoder().decode(first));
  // A body written without growing is a view of a buffer with the headroom left over.
  expect(second.buffer.byteLength).toBeGreaterThan(second.byteLength);
  expect(second.buffer.byteLength).toBeLessThanOrEqual(Math.ceil(second.byteLength * 1.2) + 16);
});

import { expect, test } from "bun:test";
import { lineBuffer } from "../../src/log/line-buffer.ts";

test("lines written in one turn go out together, in order, once the turn is over", () => {
  const written: string[] = [];
  const pending: Array<() => void> = [];
  const buffer = lineBuffer((text) => written.push(text), (flush) => pending.push(flush));
  buffer.write("a");
  buffer.write("b");
  expect(written).toEqual([]);
  expect(pending).toHaveLength(1);
  pending.shift()!();
  expect(written).toEqual(["a\nb"]);
  buffer.write("c");
  expect(pending).toHaveLength(1);
  buffer.flush();
  expect(written).toEqual(["a\nb", "c"]);
  pending.shift()!(); // the scheduled flush finds nothing left
  expect(written).toEqual(["a\nb", "c"]);
});

test("a full buffer is written at once, without waiting for the turn", () => {
  const written: string[] = [];
  const buffer = lineBuffer((text) => written.push(text), () => {}, 10);
  buffer.write("12345");
  expect(written).toEqual([]);
  buffer.write("67890");
  expect(written).toEqual(["12345\n67890"]);
});

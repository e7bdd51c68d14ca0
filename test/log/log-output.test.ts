import { expect, test } from "bun:test";
import { LogOutput } from "../../src/log/log-output.ts";

test("batches past the bound of what waits for the reader are dropped and their lines counted", () => {
  const waiting: Array<() => void> = [];
  const taken: string[] = [];
  let dropped = 0;
  const output = new LogOutput(
    (text, written) => {
      taken.push(text);
      waiting.push(written);
    },
    (lines) => (dropped += lines),
    100,
  );
  output.write("a".repeat(60));
  output.write("b".repeat(30));
  output.write("ccccc\nccccc\nccccc"); // 17 more would pass 100: dropped, three lines
  expect(taken).toEqual(["a".repeat(60), "b".repeat(30)]);
  expect(dropped).toBe(3);
  expect(output.pendingBytes).toBe(90);
  waiting.shift()!(); // the reader took the first batch
  output.write("d".repeat(70));
  expect(taken.at(-1)).toBe("d".repeat(70));
  expect(output.pendingBytes).toBe(100);
});

test("a batch that cannot be written (the reader is gone) is counted dropped, and waits no more", () => {
  let dropped = 0;
  const backlog: number[] = [];
  const output = new LogOutput(
    (_text, written) => written(true),
    (lines) => (dropped += lines),
    100,
    (bytes) => backlog.push(bytes),
  );
  output.write("a\nb");
  output.write("c");
  expect(dropped).toBe(3);
  expect(output.pendingBytes).toBe(0);
  expect(backlog.at(-1)).toBe(0);
});

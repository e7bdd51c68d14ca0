import { expect, test } from "bun:test";
import { lineProgress, streamProgress } from "../../src/importer/progress.ts";

function stream(isTTY: boolean) {
  const written: string[] = [];
  return { written, isTTY, write: (text: string) => written.push(text) };
}

test("on a terminal, a step's percentage is redrawn in place and cleared before the next line", () => {
  const out = stream(true);
  const progress = streamProgress(out);
  progress.update("reading x.mmdb", 0, 200);
  progress.update("reading x.mmdb", 1, 200); // still 0%: not redrawn
  progress.update("reading x.mmdb", 100, 200);
  progress.line("read x.mmdb in 1.0 s");
  expect(out.written).toEqual(["\r\x1b[Kreading x.mmdb 0%", "\r\x1b[Kreading x.mmdb 50%", "\r\x1b[K", "read x.mmdb in 1.0 s\n"]);
});

test("elsewhere (a log, a pipe), only the lines", () => {
  const out = stream(false);
  const progress = streamProgress(out);
  progress.update("reading x.mmdb", 100, 200);
  progress.line("done");
  expect(out.written).toEqual(["done\n"]);
  const lines: string[] = [];
  const logged = lineProgress((line) => lines.push(line));
  logged.update("reading", 1, 2);
  logged.line("done");
  expect(lines).toEqual(["done"]);
});

test("a step whose size is not known (a download without Content-Length) shows its label alone", () => {
  const out = stream(true);
  const progress = streamProgress(out);
  progress.update("downloading x.mmdb.gz 1.0 MiB", 1, 0);
  progress.update("downloading x.mmdb.gz 2.0 MiB", 2, 0);
  expect(out.written).toEqual(["\r\x1b[Kdownloading x.mmdb.gz 1.0 MiB", "\r\x1b[Kdownloading x.mmdb.gz 2.0 MiB"]);
});

/**
 * Reads one data file as `data import` does (readSourceFile) and prints, as JSON, the
 * error it stopped with (or null) and the process's peak RSS: run in a process of its
 * own by read-in-child.ts, so that the memory a hostile file takes is measured alone.
 *
 *   bun test/importer/support/read-source-child.ts FILE [FORMAT]
 */
import { existsSync, readFileSync } from "node:fs";
import type { SourceFormat } from "../../../src/importer/detect-format.ts";
import { readSourceFile } from "../../../src/importer/read-source-file.ts";

const [file, format] = process.argv.slice(2) as [string, SourceFormat | undefined];
let error: string | null = null;
try {
  await readSourceFile(file, format === undefined ? {} : { format });
} catch (thrown) {
  error = (thrown as Error).message;
}
console.log(JSON.stringify({ error, maxRssBytes: peakRss() }));

/**
 * This process's peak RSS in bytes: Linux's VmHWM, which starts afresh with the program
 * (getrusage's maxRSS keeps the parent's peak across fork and exec), else maxRSS.
 */
function peakRss(): number {
  if (existsSync("/proc/self/status")) {
    const kilobytes = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync("/proc/self/status", "utf8"))?.[1];
    if (kilobytes !== undefined) return Number(kilobytes) * 1024;
  }
  return process.resourceUsage().maxRSS * 1024;
}

import { existsSync, statSync } from "node:fs";
import { readDelimitedPacked } from "./delimited/read-delimited.ts";
import { detectFormat, formatSampleOf, type SourceFormat } from "./detect-format.ts";
import type { PackedPart } from "./join-parts.ts";
import { readMmdbPacked } from "./mmdb/read-mmdb.ts";
import type { Progress } from "./progress.ts";
import type { Family } from "./ranges.ts";

/** Reads one file of a source in its format (detected from its bytes when not given), packed. */
export async function readSourceFile(
  file: string,
  options: { format?: SourceFormat; family?: Family },
  progress?: Progress,
): Promise<{ part: PackedPart; format: SourceFormat }> {
  if (!existsSync(file)) throw new Error(`${file}: no such file`);
  if (!statSync(file).isFile()) throw new Error(`${file}: not a file`);
  const bytes = await Bun.file(file).bytes();
  const format = options.format ?? detectFormat(formatSampleOf(bytes), file);
  const began = performance.now();
  const report = (done: number, total: number) => progress?.update(`reading ${file}`, done, total);
  const part =
    format === "mmdb"
      ? readMmdbPacked(bytes, file, report)
      : readDelimitedPacked(bytes, { format, file, family: options.family }, report);
  progress?.line(`read ${file} (${format}) in ${((performance.now() - began) / 1000).toFixed(1)} s`);
  return { part, format };
}

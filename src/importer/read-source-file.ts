import { existsSync, statSync } from "node:fs";
import { familyFromFileName, readDelimitedPacked } from "./delimited/read-delimited.ts";
import { detectFormat, formatSampleOf, type SourceFormat } from "./detect-format.ts";
import type { PackedPart } from "./join-parts.ts";
import { readMmdbPacked } from "./mmdb/read-mmdb.ts";
import type { Progress } from "./progress.ts";
import type { Family } from "./ranges.ts";

/**
 * Reads one file of a source in its format (detected from its bytes when not given),
 * packed. Messages name it by `label` when given (a download, a file from an archive);
 * the family of integer addresses may still come from the file's own name.
 */
export async function readSourceFile(
  file: string,
  options: { format?: SourceFormat; family?: Family; label?: string },
  progress?: Progress,
): Promise<{ part: PackedPart; format: SourceFormat }> {
  const name = options.label ?? file;
  if (!existsSync(file)) throw new Error(`${name}: no such file`);
  if (!statSync(file).isFile()) throw new Error(`${name}: not a file`);
  const bytes = await Bun.file(file).bytes();
  const format = options.format ?? detectFormat(formatSampleOf(bytes), name);
  const began = performance.now();
  const report = (done: number, total: number) => progress?.update(`reading ${name}`, done, total);
  const family = options.family ?? (options.label !== undefined ? familyFromFileName(file) : undefined);
  const part =
    format === "mmdb"
      ? readMmdbPacked(bytes, name, report)
      : readDelimitedPacked(bytes, { format, file: name, family }, report);
  progress?.line(`read ${name} (${format}) in ${((performance.now() - began) / 1000).toFixed(1)} s`);
  return { part, format };
}

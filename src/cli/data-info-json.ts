import { isEmbedded } from "../config/paths.ts";
import type { DataSetInfo } from "../index/network-record.ts";

/**
 * A data set's description as iplookup prints it in JSON (`data info --json`, `data
 * import --json`): keys in snake_case like every other JSON iplookup writes (the API's
 * results, `usage --json`, …), so `builtAt` is `built_at` and `segmentsV4` `segments_v4`.
 * Keys are converted wherever they are, so a field added to the description later is
 * printed the same way without a change here.
 */
export function dataInfoJson(info: DataSetInfo): Record<string, unknown> {
  return snakeCaseKeys(info) as Record<string, unknown>;
}

/**
 * Where the data comes from, for people: the file's path, or, for the data embedded in
 * the compiled binary, that it is embedded (its path is internal to the binary and
 * means nothing outside it).
 */
export function dataFileText(path: string): string {
  return isEmbedded(path) ? "embedded in the binary" : path;
}

function snakeCaseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(snakeCaseKeys);
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) out[snakeCase(key)] = snakeCaseKeys(inner);
  return out;
}

/** `builtAt` → `built_at`, `segmentsV4` → `segments_v4`; snake_case keys stay as they are. */
export function snakeCase(key: string): string {
  return key.replace(/(?<=[a-z0-9])([A-Z])/g, "_$1").toLowerCase();
}

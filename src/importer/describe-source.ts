import { existsSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { showingControls } from "../access/plain-text.ts";
import type { SourceDescription } from "../index/network-record.ts";
import { knownByDatabaseType, knownByPackage } from "./known-sources.ts";
import type { SourceData } from "./source-data.ts";

export const LICENSE_NOT_STATED = "not stated";

/**
 * A source's description: what the operator gave, else what the files say about
 * themselves (an npm package.json beside them, the MMDB metadata), else the file's
 * name and date. Returns it with the source's own build time ("" when unknown).
 * What the files say is kept with its control and bidirectional characters written out
 * (showingControls): a publisher's metadata is printed on the operator's terminal (the
 * import's lines, `data info`) and must not act on it. The licence is recognised from
 * the text as the files give it, before that.
 */
export function describeSource(
  files: readonly string[],
  given: Partial<SourceDescription>,
  data: Pick<SourceData, "described">,
): SourceDescription & { builtAt: string } {
  const first = files[0] as string;
  const pkg = packageBeside(first);
  const databaseType = data.described?.name;
  const known = (pkg && knownByPackage(pkg.name)) || (databaseType ? knownByDatabaseType(databaseType) : undefined);
  const builtAt = data.described?.builtAt ?? dateInVersion(pkg?.version) ?? modified(files);
  return {
    name: given.name ?? showingControls(pkg?.name ?? databaseType ?? basename(first)),
    origin: given.origin ?? showingControls(pkg ? pkg.name : files.map((file) => basename(file)).join(" + ")),
    version: given.version ?? pkg?.version ?? (builtAt.slice(0, 10) || "unknown"),
    license: given.license ?? known?.license ?? LICENSE_NOT_STATED,
    attribution: given.attribution ?? known?.attribution ?? "",
    url: given.url ?? known?.url ?? "",
    builtAt,
  };
}

function packageBeside(file: string): { name: string; version: string } | undefined {
  const path = join(dirname(file), "package.json");
  if (!existsSync(path)) return undefined;
  try {
    const parsed = JSON.parse(readFileSync(path, "utf8")) as { name?: unknown; version?: unknown };
    return typeof parsed.name === "string" && typeof parsed.version === "string" ? { name: parsed.name, version: parsed.version } : undefined;
  } catch {
    return undefined;
  }
}

/** ip-location-db versions end in the build hour: 2.3.2026061719 → 2026-06-17T19:00:00Z. */
function dateInVersion(version: string | undefined): string | undefined {
  const match = version?.match(/\.(\d{4})(\d{2})(\d{2})(\d{2})$/);
  if (!match) return undefined;
  const [, year, month, day, hour] = match;
  const date = new Date(`${year}-${month}-${day}T${hour}:00:00Z`);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

/** Package managers set every file's time to 1985-10-26T08:15:00Z; that says nothing. */
const PACKAGE_MANAGER_MTIME = Date.UTC(1985, 9, 26, 8, 15, 0);

function modified(files: readonly string[]): string {
  const newest = Math.max(...files.map((file) => statSync(file).mtimeMs));
  return newest === PACKAGE_MANAGER_MTIME ? "" : new Date(newest).toISOString();
}

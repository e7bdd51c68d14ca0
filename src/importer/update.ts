import type { Recipe, RecipeFile, RecipeSource } from "../data-file/recipe.ts";
import type { Signal } from "../index/privacy.ts";
import type { DataSetInfo } from "../index/network-record.ts";
import { RangeIndex } from "../index/range-index.ts";
import type { SourceFormat } from "./detect-format.ts";
import { acquireFile, displayLocation, fetchWhole, inSource, type Acquired, type FileRequest } from "./fetch/acquire.ts";
import { storedUrl } from "./fetch/locations.ts";
import { buildAndInstall, withWorkDir, type InstallOptions } from "./install.ts";
import { checkInstallTarget } from "./install-target.ts";
import type { SourceFile, SourceSpec } from "./source.ts";
import { resolvedDataPath } from "./update-lock.ts";

export type UpdateOutcome =
  | { readonly changed: false; readonly checked: number }
  | { readonly changed: true; readonly info: DataSetInfo; readonly changes: readonly string[] };

/**
 * `data update`: builds the data file at `path` again from its recipe, when anything
 * it was built from changed.
 *
 * First every file is asked whether it changed (a download conditionally, a local file
 * by size, time and SHA-256; see acquireFile), and the default data set, when it came
 * last, by its data version. When nothing changed, the file is left as it is. Otherwise
 * the files that had not changed are fetched whole too (their copies are not kept), and
 * the data set is built and installed as `data import` installs it. Any failure throws
 * before the installed file is touched.
 */
export async function updateDataFile(given: string, recipe: Recipe, options: InstallOptions): Promise<UpdateOutcome> {
  const path = resolvedDataPath(given);
  const base = recipe.base === null || options.base === undefined ? [] : [options.base];
  checkInstallTarget(path, [...recipe.sources.flatMap((source) => source.files.map((file) => file.location)), ...base]);
  return withWorkDir(path, options, async (context) => {
    const fetched: Array<Array<Acquired | null>> = [];
    const changes: string[] = [];
    let checked = 0;
    for (const [i, source] of recipe.sources.entries()) {
      const files: Array<Acquired | null> = [];
      for (const file of source.files) {
        checked++;
        const result = await inSource(i, () => acquireFile(requestOf(file), context, file));
        files.push(result?.acquired ?? null);
        if (result?.changed) changes.push(`source ${i + 1} (${displayLocation(file.location)}): ${changeOf(file, result.acquired.record)}`);
      }
      fetched.push(files);
    }
    if (recipe.base !== null) {
      checked++;
      const now = options.base === undefined ? undefined : RangeIndex.open(options.base).info.dataVersion;
      if (now !== recipe.base.dataVersion) changes.push(`the default data set: ${recipe.base.dataVersion} → ${now ?? "none"}`);
    }
    if (changes.length === 0) return { changed: false, checked };
    for (const line of changes) options.progress.line(`changed: ${line}`);

    const specs: SourceSpec[] = [];
    for (const [i, source] of recipe.sources.entries()) {
      const files: SourceFile[] = [];
      for (const [j, file] of source.files.entries()) {
        const acquired = fetched[i]?.[j] ?? (await inSource(i, () => fetchWhole(requestOf(file), context)));
        (fetched[i] as Array<Acquired | null>)[j] = acquired;
        files.push(...acquired.files);
      }
      specs.push({ files, describe: source.describe, ...feedOf(source) });
    }
    const recipeSources = recipe.sources.map((source, i) => ({
      describe: source.describe,
      ...(source.signal !== undefined ? { signal: source.signal } : {}),
      ...(source.service !== undefined ? { service: source.service } : {}),
      files: source.files.map((_, j) => (fetched[i]?.[j] as Acquired).record),
    }));
    const info = await buildAndInstall(path, specs, recipeSources, { ...options, base: recipe.base === null ? undefined : options.base });
    return { changed: true, info, changes };
  });
}

/** A recorded source's --signal and --service, as the importer takes them. */
function feedOf(source: RecipeSource): Pick<SourceSpec, "feed"> {
  if (source.signal === undefined && source.service === undefined) return {};
  return { feed: { signal: source.signal as Signal | undefined, service: source.service } };
}

function requestOf(file: RecipeFile): FileRequest {
  return {
    location: file.location,
    format: file.format as SourceFormat | undefined,
    family: file.family,
    sha256: file.sha256,
    credentials: file.credentials,
    secretParams: file.secretParams,
    sha256SecretParams: file.sha256SecretParams,
    recorded: true,
  };
}

/** What changed in a file, for the operator. */
function changeOf(before: RecipeFile, after: RecipeFile): string {
  const was = before.fetched;
  const now = after.fetched;
  // A recipe from before a parameter was secret recorded the URL with it: compared without.
  if (was.url !== undefined && now.url !== undefined && storedUrl(was.url) !== storedUrl(now.url)) return `now ${displayLocation(now.url)}`;
  const parts = [`SHA-256 ${was.sha256.slice(0, 12)}… → ${now.sha256.slice(0, 12)}…`];
  if (now.lastModified !== undefined && now.lastModified !== was.lastModified) parts.push(`Last-Modified ${now.lastModified}`);
  if (now.mtime !== undefined && now.mtime !== was.mtime) parts.push(`modified ${now.mtime}`);
  return parts.join(", ");
}

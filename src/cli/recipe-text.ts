import { isEmbedded } from "../config/paths.ts";
import { readRecipe, type Recipe, type RecipeFile } from "../data-file/recipe.ts";
import { isSasSignature, isUrl, redactSecrets, takenOut, unkeptSignature } from "../importer/fetch/locations.ts";
import { snakeCase } from "./data-info-json.ts";

/**
 * The recipe of a data file for `data info`, or null when it has none (the default data,
 * the binary's embedded data, a file written before recipes) or it cannot be read.
 */
export function recipeForInfo(path: string): Recipe | null {
  if (isEmbedded(path)) return null;
  try {
    return readRecipe(path);
  } catch {
    return null;
  }
}

/** `data info`'s lines on how the file is updated. A recipe holds no credentials; messages hide any anyway. */
export function recipeLines(recipe: Recipe | null): string[] {
  if (recipe === null) return ["Update: this file records no sources to update from ('data update' cannot update it)."];
  const lines = ["Update ('data update' fetches these again and rebuilds when one changed):", ""];
  recipe.sources.forEach((source, i) => {
    for (const file of source.files) {
      const fetched = file.fetched;
      lines.push(`${i + 1}. ${redactSecrets(file.location)}${needs(file)}`);
      if (fetched.url !== undefined && fetched.url !== file.location) lines.push(`  fetched:       ${redactSecrets(fetched.url)}`);
      if (file.members !== undefined) lines.push(`  from inside:   ${file.members.join(", ")}`);
      const options = [
        ...Object.entries(source.describe).map(([key, value]) => `--${key === "version" ? "source-version" : key} ${JSON.stringify(value)}`),
        ...(source.signal !== undefined ? [`--signal ${source.signal}`] : []),
        ...(source.service !== undefined ? [`--service ${JSON.stringify(source.service)}`] : []),
        ...(file.format !== undefined ? [`--format ${file.format}`] : []),
        ...(file.family !== undefined ? [`--family ${file.family}`] : []),
        ...(file.sha256 !== undefined ? [`--sha256 ${redactSecrets(file.sha256)}`] : []),
      ];
      if (options.length > 0) lines.push(`  options:       ${options.join(" ")}`);
      if (fetched.etag !== undefined) lines.push(`  ETag:          ${fetched.etag}`);
      if (fetched.lastModified !== undefined) lines.push(`  Last-Modified: ${fetched.lastModified}`);
      if (fetched.mtime !== undefined) lines.push(`  modified:      ${fetched.mtime}`);
      lines.push(`  SHA-256:       ${fetched.sha256} (${fetched.size.toLocaleString("en-US")} bytes)`, "");
    }
  });
  if (recipe.base !== null) lines.push(`Then the default data set (it was ${recipe.base.dataVersion}).`);
  return lines;
}

/** What `data update` needs for a file beyond its recipe, as `data info` says it. */
function needs(file: RecipeFile): string {
  // An expiring signature was not kept: no setting brings it back.
  if (unkeptSignature(file) !== undefined) return " (a signed URL: import again with a new one)";
  const hidden = (url: string, names: readonly string[] | undefined) => isUrl(url) && takenOut(new URL(url), names).some(isSasSignature);
  if (hidden(file.location, file.secretParams)) return ` (with credentials: the SAS's sig, as IPLOOKUP_DOWNLOAD_AUTH=${new URL(file.location).hostname}=SIG:)`;
  if (file.sha256 !== undefined && hidden(file.sha256, file.sha256SecretParams)) {
    return ` (with credentials: its --sha256 URL's SAS sig, as IPLOOKUP_DOWNLOAD_AUTH=${new URL(file.sha256).hostname}=SIG:)`;
  }
  return file.credentials ? " (with credentials: IPLOOKUP_DOWNLOAD_AUTH)" : "";
}

/** The recipe in `data info --json`: snake_case keys like all iplookup's JSON (`last_modified`). */
export function recipeJson(recipe: Recipe | null): unknown {
  const convert = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(convert);
    if (value === null || typeof value !== "object") return value;
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [snakeCase(key), convert(inner)]));
  };
  return convert(recipe);
}

import { Database } from "bun:sqlite";
import { isSignal } from "../index/privacy.ts";
import { dataFileProblem } from "../errors/file-access.ts";
import { hasDataFileTables, malformedPages, unreadableTable } from "./checksums.ts";

/**
 * How a data file was built, so `data update` can build it again: the meta row
 * `recipe` holds this as JSON (written by `data import`; files written before it was
 * added, and the default data built by `bun run data:default`, have none, and cannot be
 * updated). It is covered by the meta checksum like every other meta row.
 *
 *   {"version":1,
 *    "base":null | {"dataVersion":"…"},        the default data set came last (--with-default)
 *    "sources":[{"describe":{"name":…,…},       the source options given (--name, --license, …)
 *                "signal":"tor", "service":"…",  --signal and --service, when given (a feed)
 *                "files":[{"location":"https://…" | "/abs/path",
 *                          "format":…, "family":4|6, "sha256":"HEX|URL",   as given
 *                          "credentials":true,  the download needed credentials
 *                          "secretParams":["token"],  taken out of the URL's query
 *                          "sha256SecretParams":["token"],  taken out of a --sha256 URL's
 *                          "fetched":{"url","etag","lastModified","size","mtime","sha256"},
 *                          "members":["GeoLite2-City_…/GeoLite2-City.mmdb"]}]}]}
 *
 * Never a credential: locations and URLs are stored without user info and without the
 * query parameters that carry secrets (see importer/fetch/locations.ts); `credentials`
 * says that `data update` needs them again (IPLOOKUP_DOWNLOAD_AUTH).
 */
export const RECIPE_KEY = "recipe";
export const RECIPE_VERSION = 1;

/** What was fetched for a file when the data file was built. */
export interface FetchedRecord {
  /** For a download: the URL fetched (a template's month filled in), without credentials. */
  readonly url?: string;
  readonly etag?: string;
  readonly lastModified?: string;
  /** Bytes fetched (the download, or the local file, as it was before unpacking). */
  readonly size: number;
  /** For a local file: its modification time (ISO 8601). */
  readonly mtime?: string;
  /** SHA-256 (hex) of what was fetched, before unpacking. */
  readonly sha256: string;
}

export interface RecipeFile {
  /** A URL (`http(s)://`, maybe with `{YYYY}`/`{MM}`) without credentials, or an absolute path. */
  readonly location: string;
  /** `--format`, `--family` and `--sha256` as given before the file. */
  readonly format?: string;
  readonly family?: 4 | 6;
  readonly sha256?: string;
  /** The download was made with credentials, which are not stored. */
  readonly credentials?: boolean;
  /**
   * Query parameters that carried a secret (IPinfo's `token`), taken out of `location`:
   * `data update` puts them back from IPLOOKUP_DOWNLOAD_AUTH.
   */
  readonly secretParams?: readonly string[];
  /** The same, taken out of a `--sha256 URL`. */
  readonly sha256SecretParams?: readonly string[];
  readonly fetched: FetchedRecord;
  /** The data files used from inside an archive, by their names in it. */
  readonly members?: readonly string[];
}

/** The description options given for a source (`--name` … `--source-version`). */
export type RecipeDescribe = Partial<Record<"name" | "version" | "license" | "attribution" | "url", string>>;

export interface RecipeSource {
  readonly describe: RecipeDescribe;
  /** `--signal` and `--service`, when given: what a feed's addresses are. */
  readonly signal?: string;
  readonly service?: string;
  readonly files: readonly RecipeFile[];
}

export interface Recipe {
  readonly version: typeof RECIPE_VERSION;
  /** The default data set was put after the sources (`--with-default`): its data version then. */
  readonly base: { readonly dataVersion: string } | null;
  readonly sources: readonly RecipeSource[];
}

/** The recipe as stored. */
export function recipeText(recipe: Recipe): string {
  return JSON.stringify(recipe);
}

/**
 * The recipe of the data file at `path`, or null when it has none. Reads the meta table
 * only: a file whose tables are damaged can still be rebuilt from its recipe. Throws
 * when the file cannot be read or its recipe is not one iplookup writes.
 */
export function readRecipe(path: string): Recipe | null {
  let db: Database;
  try {
    db = new Database(path, { readonly: true });
  } catch (error) {
    throw new Error(`cannot open the data file ${path}: ${dataFileProblem(path, error)}`);
  }
  try {
    let row: { value: string } | null;
    try {
      row = db.query<{ value: string }, [string]>("SELECT value FROM meta WHERE key = ?1").get(RECIPE_KEY);
    } catch (error) {
      if (malformedPages(error) === null && !hasDataFileTables(db)) throw new Error(`${path} is not an iplookup data file: ${(error as Error).message}`);
      throw new Error(`${path}: ${unreadableTable("meta", error).message}`);
    }
    return row === null ? null : parseRecipe(row.value, path);
  } finally {
    db.close();
  }
}

/** A stored recipe, checked to be the shape recipeText writes. */
export function parseRecipe(text: string, path: string): Recipe {
  const bad = (what: string) => new Error(`the recipe recorded in ${path} cannot be read: ${what}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw bad("it is not JSON");
  }
  if (!isObject(parsed) || parsed.version !== RECIPE_VERSION) throw bad(`it is not of version ${RECIPE_VERSION}`);
  const base = parsed.base;
  if (base !== null && !(isObject(base) && typeof base.dataVersion === "string")) throw bad("its base is malformed");
  if (!Array.isArray(parsed.sources) || parsed.sources.length === 0) throw bad("it lists no sources");
  for (const source of parsed.sources) {
    if (!isObject(source) || !isObject(source.describe) || !Array.isArray(source.files) || source.files.length === 0) throw bad("a source is malformed");
    if (!Object.values(source.describe).every((value) => typeof value === "string")) throw bad("a source's description is malformed");
    if (source.signal !== undefined && !(typeof source.signal === "string" && isSignal(source.signal))) throw bad("a source's signal is malformed");
    if (source.service !== undefined && typeof source.service !== "string") throw bad("a source's service is malformed");
    for (const file of source.files) {
      if (!isObject(file) || typeof file.location !== "string" || !isObject(file.fetched)) throw bad("a file is malformed");
      const fetched = file.fetched;
      if (typeof fetched.sha256 !== "string" || typeof fetched.size !== "number") throw bad(`the file ${file.location} is malformed`);
      for (const key of ["url", "etag", "lastModified", "mtime"]) {
        if (fetched[key] !== undefined && typeof fetched[key] !== "string") throw bad(`the file ${file.location} is malformed`);
      }
      if (file.family !== undefined && file.family !== 4 && file.family !== 6) throw bad(`the file ${file.location} has a bad family`);
      for (const key of ["format", "sha256"]) {
        if (file[key] !== undefined && typeof file[key] !== "string") throw bad(`the file ${file.location} is malformed`);
      }
      for (const key of ["members", "secretParams", "sha256SecretParams"]) {
        const list = file[key];
        if (list !== undefined && !(Array.isArray(list) && list.every((item) => typeof item === "string"))) throw bad(`the file ${file.location} is malformed`);
      }
    }
  }
  return parsed as unknown as Recipe;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

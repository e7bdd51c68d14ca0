import { existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import type { FetchedRecord, RecipeFile, RecipeSource } from "../../data-file/recipe.ts";
import type { SourceFormat } from "../detect-format.ts";
import type { Progress } from "../progress.ts";
import type { SourceFile, SourceSpec } from "../source.ts";
import { checksumFor, fetchChecksum, findPublishedChecksum, isSha256Hex, shownPlace } from "./checksum.ts";
import { download, DownloadError, type Downloaded, type DownloadOptions } from "./download.ts";
import type { ExpansionBudget } from "./expansion.ts";
import { DownloadAuth, expandTemplate, hasCredentials, isSasSignature, isTemplate, isUrl, redactSecrets, restoredValue, secretParamNames, storedUrl, takenOut, unkeptSignature, userInfoOf, type Credentials } from "./locations.ts";
import { unpack, UnpackError } from "./unpack.ts";

/**
 * Getting a source's files onto this machine, ready to read: downloads (conditional
 * when there is a copy to compare with), checksums, unpacking, and what the data file's
 * recipe records of each. Everything lands in `workDir`, a folder beside the data file
 * the caller removes afterwards.
 */
export interface AcquireContext {
  readonly workDir: string;
  readonly auth: DownloadAuth;
  readonly now: Date;
  readonly progress?: Progress;
  /** The downloads' clocks (download.ts's defaults otherwise; `--download-timeout` is `timeoutMs`). */
  readonly timeouts?: Pick<DownloadOptions, "idleMs" | "connectMs" | "timeoutMs">;
  /** What the sources may unpack to, together (`--max-expanded`). */
  readonly budget: ExpansionBudget;
  /** `--require-checksum`: a source with no checksum (given or published) is refused. */
  readonly requireChecksum?: boolean;
}

/** A file of a source as it is to be fetched: given on the command line, or from a recipe. */
export interface FileRequest {
  /** A path, or a URL (with any credentials it was given with: never stored). */
  readonly location: string;
  readonly format?: SourceFormat;
  readonly family?: 4 | 6;
  /** `--sha256 HEX|URL`. */
  readonly sha256?: string;
  /** The recipe says the download needed credentials. */
  readonly credentials?: boolean;
  /** Secret query parameters the recipe took out of the URL, to be put back from IPLOOKUP_DOWNLOAD_AUTH. */
  readonly secretParams?: readonly string[];
  /** The same, taken out of a `--sha256 URL`. */
  readonly sha256SecretParams?: readonly string[];
  /**
   * The location (and `sha256`) are a recipe's, recorded by an earlier import: recorded
   * again as they are. A recipe written before a parameter was counted as secret (a SAS
   * `sig` before 19d0acb) holds it in plain; taking it out now would leave a recipe whose
   * next update lacks it, so the update that works today would fail tomorrow.
   */
  readonly recorded?: boolean;
}

/** A fetched file: its data files on disk and the recipe's record of it. */
export interface Acquired {
  readonly files: readonly SourceFile[];
  readonly record: RecipeFile;
}

/**
 * A source that could not be fetched, checked or unpacked. The message names it without
 * credentials: `source 2 (https://host/x.mmdb.gz): HTTP 500 Internal Server Error` once
 * inSource has said which source it is.
 */
export class SourceError extends Error {
  override readonly name = "SourceError";

  constructor(
    readonly reason: string,
    /** The location as shown (credentials hidden), once known. */
    readonly where?: string,
    /** The source's position (1-based), once known. */
    readonly source?: number,
  ) {
    super(where === undefined ? reason : source === undefined ? `${where}: ${reason}` : `source ${source} (${where}): ${reason}`);
  }
}

/** How a location is named in messages: credentials hidden. */
export function displayLocation(location: string): string {
  return redactSecrets(location);
}

let folders = 0;

/**
 * Fetches one file. With `previous` (the recipe's record of it), asks whether it
 * changed: a download conditionally (If-None-Match, If-Modified-Since; a 304 or the
 * same SHA-256 as before means unchanged), a local file by size and modification time,
 * then by SHA-256. Returns null when unchanged and nothing was fetched; otherwise what
 * was fetched and whether its content differs from `previous`.
 */
export async function acquireFile(request: FileRequest, context: AcquireContext, previous?: RecipeFile): Promise<{ changed: boolean; acquired: Acquired } | null> {
  const folder = join(context.workDir, String(++folders));
  mkdirSync(folder, { recursive: true });
  try {
    // Refused before anything is downloaded: the outcome is the same on every run, and
    // the installed file (recipe and all) is left byte for byte as it was.
    const unkept = unkeptSignature(request);
    if (unkept !== undefined) throw new SourceError(unkept);
    if (isUrl(request.location)) return await acquireUrl(request, folder, context, previous);
    return await acquireLocal(request, folder, context, previous);
  } catch (error) {
    if (error instanceof SourceError) throw new SourceError(error.reason, displayLocation(request.location));
    if (error instanceof DownloadError || error instanceof UnpackError) throw new SourceError(error.message, displayLocation(request.location));
    // A system call's error (ENOSPC: a full disk; EIO) names the source it came with too.
    if (error instanceof Error && /^E[A-Z]+$/.test(String((error as NodeJS.ErrnoException).code))) throw new SourceError(error.message, displayLocation(request.location));
    throw error;
  }
}

async function acquireUrl(request: FileRequest, folder: string, context: AcquireContext, previous?: RecipeFile): Promise<{ changed: boolean; acquired: Acquired } | null> {
  const template = isTemplate(request.location);
  let outcome: Downloaded | undefined;
  let url = "";
  // What goes as Basic authentication, to the download and to its checksum's places.
  let basic: Credentials | undefined;
  // A URL naming the month may not exist yet early in a month: then last month's is used.
  for (let monthsBack = 0; monthsBack <= (template ? 1 : 0); monthsBack++) {
    url = expandTemplate(request.location, context.now, monthsBack);
    const parsed = new URL(url);
    const credentials = userInfoOf(parsed) ?? context.auth.for(parsed);
    const missing = takenOut(parsed, request.secretParams);
    if (request.credentials && credentials === undefined && !hasCredentials(parsed)) {
      throw new SourceError(
        missing.some(isSasSignature)
          ? `it was downloaded from an Azure SAS URL, whose sig iplookup does not keep: set IPLOOKUP_DOWNLOAD_AUTH to ${parsed.hostname}=SIG: (the sig value, as in the URL)`
          : `it was downloaded with credentials, which iplookup does not keep: set IPLOOKUP_DOWNLOAD_AUTH to USER:PASSWORD (or ${parsed.hostname}=USER:PASSWORD)`,
      );
    }
    basic = credentials;
    // A token that was in the query goes back there: the password, or the user name when
    // there is none (IPinfo: IPLOOKUP_DOWNLOAD_AUTH=ipinfo.io=TOKEN:); a SAS's sig too.
    if (credentials !== undefined && missing.length > 0) {
      for (const name of missing) parsed.searchParams.set(name, restoredValue(name, credentials));
      url = parsed.href;
      // A SAS authorizes the request by its query alone; an Authorization header beside
      // it is one more credential for Azure Storage to check, of a scheme (Basic) it does
      // not take, and may get the request refused: the entry that stood for the sig is
      // not sent as Basic authentication too.
      if (missing.some(isSasSignature)) basic = undefined;
    }
    // A recipe from before a parameter was secret recorded the URL with it: compared without.
    const same = previous?.fetched.url !== undefined && storedUrl(previous.fetched.url) === storedUrl(url);
    const result = await download(
      { url, credentials: basic, etag: same ? previous?.fetched.etag : undefined, lastModified: same ? previous?.fetched.lastModified : undefined },
      folder,
      { ...context.timeouts, progress: context.progress, label: displayLocation(url), missingOk: template && monthsBack === 0 ? [404, 410] : undefined },
    );
    if (result.kind === "not-modified") {
      context.progress?.line(`${displayLocation(url)}: not modified`);
      return null;
    }
    if (result.kind === "downloaded") {
      outcome = result;
      break;
    }
    context.progress?.line(`${displayLocation(url)}: HTTP ${result.status}; trying the month before`);
  }
  const downloaded = outcome as Downloaded;
  const credentials = basic;
  context.progress?.line(`downloaded ${displayLocation(url)} (${(downloaded.size / 2 ** 20).toFixed(1)} MiB, SHA-256 ${downloaded.sha256.slice(0, 12)}…)`);
  const changed = previous === undefined || previous.fetched.sha256 !== downloaded.sha256;
  const given = await expectedChecksum(request, downloaded.name, folder, context, credentials);
  if (given !== undefined) {
    verify(downloaded.sha256, given, "--sha256", context);
  } else {
    const published = await findPublishedChecksum(url, downloaded.name, join(folder, "sha256"), { ...context.timeouts, credentials });
    if (published.hex !== undefined) verify(downloaded.sha256, published.hex, shownPlace(url, published.at), context);
    else noChecksum(published.looked.map((place) => shownPlace(url, place)), context);
  }
  const fetched: FetchedRecord = {
    url: storedUrl(url),
    ...(downloaded.etag !== undefined ? { etag: downloaded.etag } : {}),
    ...(downloaded.lastModified !== undefined ? { lastModified: downloaded.lastModified } : {}),
    size: downloaded.size,
    sha256: downloaded.sha256,
  };
  // A recorded location's parameters in plain are used as they are, needing nothing more.
  const inQuery = request.recorded ? [] : secretParamNames(new URL(request.location));
  const usedCredentials = inQuery.length > 0 || userInfoOf(new URL(request.location)) !== undefined || request.credentials === true || (userInfoOf(new URL(url)) ?? context.auth.for(new URL(url))) !== undefined;
  const secretParams = [...new Set([...(request.secretParams ?? []), ...inQuery])];
  const acquired = await unpacked(downloaded.path, downloaded.name, displayLocation(url), folder, { ...request, secretParams }, fetched, usedCredentials, context);
  return { changed, acquired };
}

async function acquireLocal(request: FileRequest, folder: string, context: AcquireContext, previous?: RecipeFile): Promise<{ changed: boolean; acquired: Acquired } | null> {
  const path = resolve(request.location);
  if (!existsSync(path)) throw new SourceError("no such file");
  const stat = statSync(path);
  if (!stat.isFile()) throw new SourceError("not a file");
  const mtime = stat.mtime.toISOString();
  if (previous !== undefined && previous.fetched.size === stat.size && previous.fetched.mtime === mtime) return null;
  const sha256 = await sha256OfFile(path);
  if (previous !== undefined && previous.fetched.sha256 === sha256) return null;
  const given = await expectedChecksum(request, basename(path), folder, context, undefined);
  if (given !== undefined) {
    verify(sha256, given, "--sha256", context);
  } else if (existsSync(`${path}.sha256`)) {
    // A checksum file saved beside it (as publishers put URL.sha256 beside a download):
    // there, it must give this file's checksum.
    const beside = checksumFor(readFileSync(`${path}.sha256`, "latin1"), basename(path));
    if (beside === undefined) throw new SourceError(`${path}.sha256 holds no SHA-256 for ${basename(path)}; refused`);
    verify(sha256, beside, `${path}.sha256`, context);
  } else {
    noChecksum([`${path}.sha256`], context);
  }
  const fetched: FetchedRecord = { size: stat.size, mtime, sha256 };
  return { changed: true, acquired: await unpacked(path, basename(path), path, folder, request, fetched, false, context) };
}

async function unpacked(
  file: string,
  name: string,
  display: string,
  folder: string,
  request: FileRequest,
  fetched: FetchedRecord,
  credentials: boolean,
  context: AcquireContext,
): Promise<Acquired> {
  const progress = context.progress;
  const result = await unpack(file, name, join(folder, "unpacked"), request.format, context.budget);
  const files = result.files.map((unpackedFile): SourceFile => ({
    path: unpackedFile.path,
    format: request.format,
    family: request.family,
    // Messages name the source as the operator gave it, and the file's name inside it.
    label: unpackedFile.member !== undefined ? `${display}: ${unpackedFile.member}` : display,
  }));
  const members = result.files.flatMap((unpackedFile) => (unpackedFile.member !== undefined ? [unpackedFile.member] : []));
  // A `--sha256 URL`'s secrets are taken out and recorded by name as the location's are.
  const sha256Url = request.sha256 !== undefined && isUrl(request.sha256) ? request.sha256 : undefined;
  const sha256SecretParams =
    sha256Url === undefined ? [] : [...new Set([...(request.sha256SecretParams ?? []), ...(request.recorded ? [] : secretParamNames(new URL(sha256Url)))])];
  const record: RecipeFile = {
    location: request.recorded ? request.location : isUrl(request.location) ? storedUrl(request.location) : resolve(request.location),
    ...(request.format !== undefined ? { format: request.format } : {}),
    ...(request.family !== undefined ? { family: request.family } : {}),
    ...(request.sha256 !== undefined ? { sha256: !isUrl(request.sha256) ? request.sha256.toLowerCase() : request.recorded ? request.sha256 : storedUrl(request.sha256) } : {}),
    ...(credentials ? { credentials: true } : {}),
    ...(request.secretParams !== undefined && request.secretParams.length > 0 ? { secretParams: request.secretParams } : {}),
    ...(sha256SecretParams.length > 0 ? { sha256SecretParams } : {}),
    fetched,
    ...(members.length > 0 ? { members } : {}),
  };
  if (result.container !== null) {
    progress?.line(`unpacked ${display} (${result.container})${members.length > 0 ? `: ${members.join(", ")}` : ""}`);
  }
  return { files, record };
}

/**
 * The checksum the operator gave (`--sha256 HEX`, or fetched from `--sha256 URL`). A
 * token or SAS sig the recipe took out of the URL goes back from IPLOOKUP_DOWNLOAD_AUTH's
 * entry for its host, as the source's does.
 */
async function expectedChecksum(request: FileRequest, name: string, folder: string, context: AcquireContext, credentials: Credentials | undefined): Promise<string | undefined> {
  const option = request.sha256;
  if (option === undefined) return undefined;
  if (isSha256Hex(option)) return option.toLowerCase();
  const url = new URL(option);
  const own = userInfoOf(url) ?? context.auth.for(url);
  const missing = takenOut(url, request.sha256SecretParams);
  if (missing.length > 0) {
    if (own === undefined) {
      const value = missing.some(isSasSignature) ? "SIG" : "TOKEN";
      throw new SourceError(
        `its checksum (--sha256 URL) was downloaded with its ${missing.join(", ")} in the query, which iplookup does not keep: set IPLOOKUP_DOWNLOAD_AUTH to ${url.hostname}=${value}:`,
      );
    }
    for (const param of missing) url.searchParams.set(param, restoredValue(param, own));
  }
  // As for the source: the entry that stood for a SAS's sig is not sent as Basic authentication too.
  const basic = missing.some(isSasSignature) ? undefined : (own ?? credentials);
  return fetchChecksum(url.href, name, join(folder, "sha256"), { ...context.timeouts, credentials: basic });
}

/** Checks the SHA-256 against the one `from` gives, and says which was verified. */
function verify(actual: string, expected: string, from: string, context: AcquireContext): void {
  if (expected !== actual) throw new SourceError(`its SHA-256 is ${actual}, but ${displayLocation(from)} says ${expected}: refused`);
  context.progress?.line(`checksum verified: SHA-256 ${actual} (from ${displayLocation(from)})`);
}

/** No checksum given, none published: said, or refused under --require-checksum. */
function noChecksum(looked: readonly string[], context: AcquireContext): void {
  const where = looked.join(" or ");
  if (context.requireChecksum) throw new SourceError(`no checksum is published for it (nothing at ${where}) and --require-checksum is given: refused`);
  context.progress?.line(`no checksum published (nothing at ${where}): not verified`);
}

async function sha256OfFile(path: string): Promise<string> {
  const hash = new Bun.CryptoHasher("sha256");
  for await (const chunk of Bun.file(path).stream()) hash.update(chunk);
  return hash.digest("hex");
}

/**
 * Fetches every source of an import: returns the sources as local files, ready for
 * buildDataSet, and the recipe of each. A failure names the source by its position and
 * location.
 */
export async function acquireSources(specs: readonly SourceSpec[], context: AcquireContext): Promise<{ specs: SourceSpec[]; recipe: RecipeSource[] }> {
  const local: SourceSpec[] = [];
  const recipe: RecipeSource[] = [];
  for (const [i, spec] of specs.entries()) {
    const files: SourceFile[] = [];
    const records: RecipeFile[] = [];
    for (const file of spec.files) {
      const acquired = await inSource(i, () => fetchWhole(requestOf(file), context));
      files.push(...acquired.files);
      records.push(acquired.record);
    }
    local.push({ files, describe: spec.describe, ...(spec.feed !== undefined ? { feed: spec.feed } : {}) });
    recipe.push({ describe: describeOptions(spec), ...feedOptions(spec), files: records });
  }
  return { specs: local, recipe };
}

/** Fetches a file whole, however it compares with any copy before. */
export async function fetchWhole(request: FileRequest, context: AcquireContext): Promise<Acquired> {
  const result = await acquireFile(request, context);
  // Only a conditional request may be answered "not modified".
  if (result === null) throw new SourceError("the server answered 304 Not Modified to a request that was not conditional", displayLocation(request.location));
  return result.acquired;
}

/** Runs a step of source `i` (0-based), its failure naming the source. */
export async function inSource<T>(i: number, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (error instanceof SourceError && error.source === undefined) throw new SourceError(error.reason, error.where, i + 1);
    throw error;
  }
}

export function requestOf(file: SourceFile): FileRequest {
  return { location: file.path, format: file.format, family: file.family, sha256: file.sha256 };
}

/** `--signal` and `--service` given for a source, as the recipe keeps them. */
function feedOptions(spec: SourceSpec): Pick<RecipeSource, "signal" | "service"> {
  return {
    ...(spec.feed?.signal !== undefined ? { signal: spec.feed.signal } : {}),
    ...(spec.feed?.service !== undefined ? { service: spec.feed.service } : {}),
  };
}

/** The description options given for a source, as the recipe keeps them. */
function describeOptions(spec: SourceSpec): RecipeSource["describe"] {
  const given = spec.describe ?? {};
  const out: Record<string, string> = {};
  for (const key of ["name", "version", "license", "attribution", "url"] as const) {
    const value = given[key];
    if (value !== undefined) out[key] = value;
  }
  return out;
}

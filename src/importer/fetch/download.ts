import { mkdirSync } from "node:fs";
import { type FileHandle, open, utimes } from "node:fs/promises";
import { join } from "node:path";
import { showingControls } from "../../access/plain-text.ts";
import { VERSION } from "../../build-info.ts";
import type { Progress } from "../progress.ts";
import { writeAll, writeFailed } from "./disk-writes.ts";
import { basicAuthorization, type Credentials, redactSecrets, userInfoOf } from "./locations.ts";

/** Redirects followed before a download is given up. */
const MAX_REDIRECTS = 10;
/** A download stops when no byte of its body has come for this long. */
export const DEFAULT_IDLE_MS = 60_000;
/** A request stops when its answer (connection, TLS, status and headers) has not come within this long. */
export const DEFAULT_CONNECT_MS = 30_000;
/**
 * A download stops when it has not ended this long after it began, however steadily
 * bytes come (`--download-timeout`): a publisher that trickles a byte now and then
 * cannot hold an update, or `serve --update-every`, for ever.
 */
export const DEFAULT_DOWNLOAD_TIMEOUT_MS = 30 * 60_000;
/** The largest download taken: a data set is read whole into memory afterwards anyway. */
export const MAX_DOWNLOAD_BYTES = 4 * 2 ** 30;
/** Progress is redrawn at most this often. */
const PROGRESS_EVERY_MS = 100;

/** A download's failure; the message names the reason, never a credential. */
export class DownloadError extends Error {
  override readonly name = "DownloadError";
}

/** A download larger than it may be. */
export class TooLargeError extends DownloadError {}

export interface DownloadRequest {
  /** The URL, maybe with user info (sent as Basic authentication, then dropped). */
  readonly url: string;
  /** Credentials for the starting host when the URL has none (IPLOOKUP_DOWNLOAD_AUTH). */
  readonly credentials?: Credentials;
  /** Validators of the copy at hand: a 304 answer means it is still current. */
  readonly etag?: string;
  readonly lastModified?: string;
}

export interface Downloaded {
  readonly kind: "downloaded";
  /** Where the body was written. */
  readonly path: string;
  /** A file name for it: Content-Disposition's, else the URL path's last segment. */
  readonly name: string;
  readonly size: number;
  readonly sha256: string;
  readonly etag?: string;
  readonly lastModified?: string;
  /** The URL the body came from, after redirects (credentials still in it when given). */
  readonly finalUrl: string;
}

export type DownloadOutcome = Downloaded | { readonly kind: "not-modified" } | { readonly kind: "not-found"; readonly status: number };

export interface DownloadOptions {
  readonly progress?: Progress;
  readonly idleMs?: number;
  /** How long each answer may take to come (DEFAULT_CONNECT_MS). */
  readonly connectMs?: number;
  /** The whole download's deadline, redirects included (DEFAULT_DOWNLOAD_TIMEOUT_MS). */
  readonly timeoutMs?: number;
  /** A short text, e.g. the download's name, or null for no progress (checksum files). */
  readonly label?: string | null;
  /** Statuses answered as "not-found" instead of an error. */
  readonly missingOk?: readonly number[];
  /** The most bytes taken (default MAX_DOWNLOAD_BYTES). */
  readonly maxBytes?: number;
}

/**
 * Downloads `request.url` into a new file in `dir`, a folder of its own (the file takes
 * the download's name, which may tell its family), streaming it to disk (never whole in
 * memory) while it is hashed (SHA-256), and shows its progress. Asks conditionally when
 * validators are given (If-None-Match, If-Modified-Since). Follows redirects itself, so
 * that credentials go only to the origin the download starts at: a publisher that
 * redirects to a signed URL elsewhere (MaxMind does) must not receive them, and such
 * hosts refuse a request with two kinds of authentication. A body shorter than its
 * Content-Length, a connection cut, an answer that is not 2xx or 304 are errors. The
 * file's modification time is set to Last-Modified when the server sends one.
 *
 * Three clocks end it (monotonic timers): each answer must come within `connectMs`, the
 * body must not pause for `idleMs`, and the whole must end within `timeoutMs`.
 */
export async function download(request: DownloadRequest, dir: string, options: DownloadOptions = {}): Promise<DownloadOutcome> {
  const idleMs = options.idleMs ?? DEFAULT_IDLE_MS;
  const connectMs = options.connectMs ?? DEFAULT_CONNECT_MS;
  const timeoutMs = options.timeoutMs ?? DEFAULT_DOWNLOAD_TIMEOUT_MS;
  const maxBytes = options.maxBytes ?? MAX_DOWNLOAD_BYTES;
  const start = new URL(request.url);
  const credentials = userInfoOf(start) ?? request.credentials;
  start.username = "";
  start.password = "";
  const controller = new AbortController();
  /** Why the download was stopped, once it was. */
  let stoppedBecause: string | undefined;
  const stopAfter = (ms: number, why: string) =>
    setTimeout(() => {
      stoppedBecause ??= why;
      controller.abort();
    }, ms);
  const deadline = stopAfter(timeoutMs, `it did not end within --download-timeout ${seconds(timeoutMs)}`);
  let idle = stopAfter(connectMs, `no answer within ${seconds(connectMs)}`);
  const stillAlive = () => {
    clearTimeout(idle);
    idle = stopAfter(idleMs, `no data for ${seconds(idleMs)}`);
  };
  const answerAwaited = () => {
    clearTimeout(idle);
    idle = stopAfter(connectMs, `no answer within ${seconds(connectMs)}`);
  };
  try {
    let url = start;
    let response: Response;
    for (let hop = 0; ; hop++) {
      const headers: Record<string, string> = { "user-agent": `iplookup/${VERSION}`, "accept-encoding": "identity" };
      if (credentials && url.origin === start.origin) headers.authorization = basicAuthorization(credentials);
      if (request.etag) headers["if-none-match"] = request.etag;
      if (request.lastModified) headers["if-modified-since"] = request.lastModified;
      answerAwaited();
      try {
        // decompress: false: a body sent with a Content-Encoding (asked for or not) is
        // taken as the bytes sent, never inflated here, where no bound would meter it.
        response = await fetch(url, { headers, redirect: "manual", signal: controller.signal, decompress: false });
      } catch (error) {
        throw new DownloadError(stoppedBecause ?? reasonOf(error));
      }
      stillAlive();
      const location = response.headers.get("location");
      if (response.status >= 300 && response.status < 400 && response.status !== 304 && location !== null) {
        await response.body?.cancel();
        if (hop >= MAX_REDIRECTS) throw new DownloadError(`more than ${MAX_REDIRECTS} redirects`);
        url = redirectTarget(location, url, response.status);
        if (url.protocol !== "http:" && url.protocol !== "https:") throw new DownloadError(`redirected to a ${url.protocol} URL`);
        continue;
      }
      break;
    }
    if (response.status === 304) {
      await response.body?.cancel();
      return { kind: "not-modified" };
    }
    if (options.missingOk?.includes(response.status)) {
      await response.body?.cancel();
      return { kind: "not-found", status: response.status };
    }
    if (response.status < 200 || response.status >= 300) {
      await response.body?.cancel();
      const hint = response.status === 401 || response.status === 403 ? " (check the credentials: IPLOOKUP_DOWNLOAD_AUTH, or the URL's user info)" : "";
      throw new DownloadError(`HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ""}${hint}`);
    }
    const coding = contentCoding(response);
    if (coding !== null) {
      await response.body?.cancel();
      throw new DownloadError(`it was sent with Content-Encoding ${coding}, which iplookup did not ask for and does not take`);
    }
    const name = fileNameOf(response, url);
    const declared = declaredLength(response);
    if (declared !== undefined && declared > maxBytes) {
      await response.body?.cancel();
      throw new TooLargeError(`it is ${declared} bytes, more than the ${maxBytes} iplookup takes`);
    }
    const path = join(dir, name);
    let file: FileHandle;
    try {
      mkdirSync(dir, { recursive: true });
      file = await open(path, "wx", 0o600);
    } catch (error) {
      await response.body?.cancel();
      throw new DownloadError(writeFailed(path, error));
    }
    const hash = new Bun.CryptoHasher("sha256");
    let size = 0;
    let drawn = 0;
    const label = options.label === null ? null : `downloading ${options.label ?? name}`;
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    try {
      for (;;) {
        let chunk: Awaited<ReturnType<typeof reader.read>>;
        try {
          chunk = await reader.read();
        } catch (error) {
          const cause = stoppedBecause ?? reasonOf(error);
          throw new DownloadError(`the download was cut short after ${size} bytes${declared !== undefined ? ` of ${declared}` : ""} (${cause})`);
        }
        if (chunk.done) break;
        stillAlive();
        size += chunk.value.byteLength;
        if (size > maxBytes) {
          await reader.cancel();
          throw new TooLargeError(`it is more than the ${maxBytes} bytes iplookup takes`);
        }
        hash.update(chunk.value);
        await writeAll(file, chunk.value, path, (reason) => new DownloadError(reason));
        if (label !== null && options.progress && performance.now() - drawn >= PROGRESS_EVERY_MS) {
          drawn = performance.now();
          options.progress.update(`${label} ${mebibytes(size)}${declared !== undefined ? ` of ${mebibytes(declared)}` : ""}`, size, declared ?? 0);
        }
      }
    } catch (error) {
      await reader.cancel().catch(() => {});
      await file.close().catch(() => {});
      throw error;
    }
    try {
      await file.close();
    } catch (error) {
      throw new DownloadError(writeFailed(path, error));
    }
    if (declared !== undefined && size !== declared) {
      throw new DownloadError(`the download was cut short: ${size} of ${declared} bytes`);
    }
    const lastModified = response.headers.get("last-modified") ?? undefined;
    const modified = lastModified === undefined ? Number.NaN : Date.parse(lastModified);
    if (!Number.isNaN(modified)) await utimes(path, new Date(modified), new Date(modified));
    return {
      kind: "downloaded",
      path,
      name,
      size,
      sha256: hash.digest("hex"),
      etag: response.headers.get("etag") ?? undefined,
      lastModified,
      finalUrl: url.href,
    };
  } finally {
    clearTimeout(idle);
    clearTimeout(deadline);
  }
}

/**
 * Where a redirect leads: its Location read against the URL it answered. A Location that
 * is not a URL is the publisher's fault, told as a DownloadError like any other, so the
 * failure names the source; the Location is quoted with its secrets hidden and its
 * control characters written out (it came from the network), and cut short.
 */
function redirectTarget(location: string, base: URL, status: number): URL {
  try {
    return new URL(location, base);
  } catch {
    // Hidden before it is cut: a cut could part a secret from what marks it as one.
    const hidden = redactSecrets(location);
    const shown = hidden.length > MAX_LOCATION_SHOWN ? `${hidden.slice(0, MAX_LOCATION_SHOWN)}...` : hidden;
    throw new DownloadError(`redirected (HTTP ${status}) to "${showingControls(shown)}", which is not a valid URL`);
  }
}

/** The most characters of a bad redirect Location a message quotes. */
const MAX_LOCATION_SHOWN = 200;

/** A duration for messages: `30 s`, `1.5 s`, `30 min`. */
function seconds(ms: number): string {
  if (ms >= 120_000 && ms % 60_000 === 0) return `${ms / 60_000} min`;
  return `${Number((ms / 1000).toFixed(1))} s`;
}

/**
 * The content coding a body was sent with despite `Accept-Encoding: identity`, or null
 * for none. gzip is no coding here: its bytes are kept as sent, a gzip file that unpack
 * reads within the bounds of any other (S3 serves objects stored with
 * `Content-Encoding: gzip` so, whatever was asked). Any other coding is refused.
 */
function contentCoding(response: Response): string | null {
  const codings = (response.headers.get("content-encoding") ?? "")
    .split(",")
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== "" && coding !== "identity");
  if (codings.length === 0 || (codings.length === 1 && (codings[0] === "gzip" || codings[0] === "x-gzip"))) return null;
  return codings.join(", ");
}

/** Content-Length: the bytes read, since no content coding is undone. */
function declaredLength(response: Response): number | undefined {
  const text = response.headers.get("content-length");
  return text !== null && /^\d+$/.test(text) ? Number(text) : undefined;
}

/** The file name Content-Disposition gives, else the URL path's last segment, made safe as one name. */
function fileNameOf(response: Response, url: URL): string {
  const disposition = response.headers.get("content-disposition") ?? "";
  const quoted = /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(disposition)?.[1];
  let name = quoted ?? url.pathname.split("/").filter((part) => part !== "").pop() ?? "";
  try {
    name = decodeURIComponent(name);
  } catch {
    // kept as sent
  }
  name = name.replace(/[/\\\x00-\x1f]/g, "_").slice(0, 200);
  return name === "" || name === "." || name === ".." ? "download" : name;
}

function mebibytes(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}

/** A network error's reason, without the URL or anything in it. */
function reasonOf(error: unknown): string {
  const message = (error as Error)?.message ?? String(error);
  return redactSecrets(message.replace(/\. For more information, pass `verbose: true`.*$/s, "").replace(/ Is the computer able to access the url\?/, ""));
}

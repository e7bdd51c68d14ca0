import { mkdirSync } from "node:fs";
import { open, utimes } from "node:fs/promises";
import { join } from "node:path";
import { VERSION } from "../../build-info.ts";
import type { Progress } from "../progress.ts";
import { basicAuthorization, type Credentials, redactSecrets, userInfoOf } from "./locations.ts";

/** Redirects followed before a download is given up. */
const MAX_REDIRECTS = 10;
/** A download stops when no byte has come for this long (or no answer, for the headers). */
export const DEFAULT_IDLE_MS = 60_000;
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
  /** A short text, e.g. the download's name, or null for no progress (checksum files). */
  readonly label?: string | null;
  /** Answer 404 and 410 ("4xx": any 4xx) as "not-found" instead of an error. */
  readonly missingOk?: "404" | "4xx";
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
 */
export async function download(request: DownloadRequest, dir: string, options: DownloadOptions = {}): Promise<DownloadOutcome> {
  const idleMs = options.idleMs ?? DEFAULT_IDLE_MS;
  const maxBytes = options.maxBytes ?? MAX_DOWNLOAD_BYTES;
  const start = new URL(request.url);
  const credentials = userInfoOf(start) ?? request.credentials;
  start.username = "";
  start.password = "";
  const controller = new AbortController();
  let idle = setTimeout(() => controller.abort(), idleMs);
  const stillAlive = () => {
    clearTimeout(idle);
    idle = setTimeout(() => controller.abort(), idleMs);
  };
  try {
    let url = start;
    let response: Response;
    for (let hop = 0; ; hop++) {
      const headers: Record<string, string> = { "user-agent": `iplookup/${VERSION}`, "accept-encoding": "identity" };
      if (credentials && url.origin === start.origin) headers.authorization = basicAuthorization(credentials);
      if (request.etag) headers["if-none-match"] = request.etag;
      if (request.lastModified) headers["if-modified-since"] = request.lastModified;
      try {
        response = await fetch(url, { headers, redirect: "manual", signal: controller.signal });
      } catch (error) {
        throw new DownloadError(controller.signal.aborted ? `no answer within ${idleMs / 1000} s` : reasonOf(error));
      }
      stillAlive();
      const location = response.headers.get("location");
      if (response.status >= 300 && response.status < 400 && response.status !== 304 && location !== null) {
        await response.body?.cancel();
        if (hop >= MAX_REDIRECTS) throw new DownloadError(`more than ${MAX_REDIRECTS} redirects`);
        url = new URL(location, url);
        if (url.protocol !== "http:" && url.protocol !== "https:") throw new DownloadError(`redirected to a ${url.protocol} URL`);
        continue;
      }
      break;
    }
    if (response.status === 304) {
      await response.body?.cancel();
      return { kind: "not-modified" };
    }
    if (options.missingOk && (response.status === 404 || response.status === 410 || (options.missingOk === "4xx" && response.status >= 400 && response.status < 500))) {
      await response.body?.cancel();
      return { kind: "not-found", status: response.status };
    }
    if (response.status < 200 || response.status >= 300) {
      await response.body?.cancel();
      const hint = response.status === 401 || response.status === 403 ? " (check the credentials: IPLOOKUP_DOWNLOAD_AUTH, or the URL's user info)" : "";
      throw new DownloadError(`HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ""}${hint}`);
    }
    const name = fileNameOf(response, url);
    const declared = declaredLength(response);
    if (declared !== undefined && declared > maxBytes) {
      await response.body?.cancel();
      throw new TooLargeError(`it is ${declared} bytes, more than the ${maxBytes} iplookup takes`);
    }
    mkdirSync(dir, { recursive: true });
    const path = join(dir, name);
    const file = await open(path, "wx", 0o600);
    const hash = new Bun.CryptoHasher("sha256");
    let size = 0;
    let drawn = 0;
    const label = options.label === null ? null : `downloading ${options.label ?? name}`;
    try {
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      for (;;) {
        let chunk: Awaited<ReturnType<typeof reader.read>>;
        try {
          chunk = await reader.read();
        } catch (error) {
          const cause = controller.signal.aborted ? `no data for ${idleMs / 1000} s` : reasonOf(error);
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
        await file.write(chunk.value);
        if (label !== null && options.progress && performance.now() - drawn >= PROGRESS_EVERY_MS) {
          drawn = performance.now();
          options.progress.update(`${label} ${mebibytes(size)}${declared !== undefined ? ` of ${mebibytes(declared)}` : ""}`, size, declared ?? 0);
        }
      }
    } finally {
      await file.close();
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
  }
}

/** Content-Length, when it counts the bytes read (no content coding applied). */
function declaredLength(response: Response): number | undefined {
  const encoding = response.headers.get("content-encoding");
  if (encoding !== null && encoding.toLowerCase() !== "identity") return undefined;
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

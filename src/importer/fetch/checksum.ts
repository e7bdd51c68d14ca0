import { readFileSync, rmSync } from "node:fs";
import { download, DownloadError, TooLargeError, type DownloadOptions } from "./download.ts";
import { redactSecrets, type Credentials } from "./locations.ts";

/** The largest checksum file read (a publisher's list of checksums stays far below). */
const MAX_CHECKSUM_FILE = 1024 * 1024;

export function isSha256Hex(text: string): boolean {
  return /^[0-9a-fA-F]{64}$/.test(text);
}

/**
 * The SHA-256 for `name` in a checksum file: sha256sum's `HEX  NAME` (or `HEX *NAME`)
 * lines, BSD's `SHA256 (NAME) = HEX`, or a bare HEX. MaxMind publishes
 * `HEX  GeoLite2-City_20261120.tar.gz`. With several lines, the one naming `name`;
 * undefined when none fits.
 */
export function checksumFor(text: string, name: string): string | undefined {
  const read = readChecksumFile(text, name);
  return read.kind === "found" ? read.hex : undefined;
}

/**
 * What a checksum file says of `name`: "found" (one line, whatever file it names — a
 * publisher's file beside a download names the dated file, not the URL's — or the line
 * naming `name`), "other" (lines of checksums, none of them for `name`), or "none" (no
 * checksum line at all: not a checksum file).
 */
export function readChecksumFile(text: string, name: string): { kind: "found"; hex: string } | { kind: "other" } | { kind: "none" } {
  const found: Array<{ hex: string; file?: string }> = [];
  for (const line of text.split(/\r?\n/)) {
    const trimmed = line.trim();
    if (trimmed === "" || trimmed.startsWith("#")) continue;
    const gnu = /^([0-9a-fA-F]{64})(?:\s+\*?(.+))?$/.exec(trimmed);
    const bsd = /^SHA256\s*\((.+)\)\s*=\s*([0-9a-fA-F]{64})$/i.exec(trimmed);
    if (gnu) found.push({ hex: (gnu[1] as string).toLowerCase(), file: gnu[2]?.trim() });
    else if (bsd) found.push({ hex: (bsd[2] as string).toLowerCase(), file: (bsd[1] as string).trim() });
  }
  if (found.length === 0) return { kind: "none" };
  if (found.length === 1) return { kind: "found", hex: (found[0] as { hex: string }).hex };
  const hex = found.find((entry) => entry.file !== undefined && (entry.file === name || entry.file.split("/").pop() === name))?.hex;
  return hex === undefined ? { kind: "other" } : { kind: "found", hex };
}

type ProbeOptions = { credentials?: Credentials } & Pick<DownloadOptions, "idleMs" | "connectMs" | "timeoutMs">;

/**
 * Fetches the checksum file the operator named (`--sha256 URL`) and returns the SHA-256
 * it gives for `name`: it must be there and hold one, or this throws.
 */
export async function fetchChecksum(url: string, name: string, dir: string, options: ProbeOptions): Promise<string> {
  let outcome;
  try {
    outcome = await download({ url, credentials: options.credentials }, dir, { ...timeouts(options), label: null, maxBytes: MAX_CHECKSUM_FILE });
  } catch (error) {
    if (error instanceof DownloadError) throw new DownloadError(`its checksum file could not be fetched: ${error.message}`);
    throw error;
  }
  if (outcome.kind !== "downloaded") throw new DownloadError(`its checksum file could not be fetched: HTTP ${outcome.kind === "not-found" ? outcome.status : 304}`);
  const text = readFileSync(outcome.path, "latin1");
  rmSync(outcome.path, { force: true });
  const hex = checksumFor(text, name);
  if (hex === undefined) throw new DownloadError(`the checksum file holds no SHA-256 for ${name}`);
  return hex;
}

/**
 * Where a publisher puts a download's checksum (CONTRACT §13): the URL with `.sha256`
 * appended as text (MaxMind: `…/download?suffix=tar.gz` → `…?suffix=tar.gz.sha256`) and,
 * for a URL with a query, its path with `.sha256` appended before the query
 * (`…/file.csv.gz.sha256?token=…`, a signed or token URL's form).
 */
export function checksumPlaces(url: string): string[] {
  const places = [`${url}.sha256`];
  const parsed = new URL(url);
  if (parsed.search !== "") {
    parsed.pathname = `${parsed.pathname}.sha256`;
    places.push(parsed.href);
  }
  return places;
}

/**
 * A place checksumPlaces gives, as messages show it: with its secrets hidden, and the
 * `.sha256` appended to the URL's query kept in sight (`…?token=***.sha256`); hidden
 * with the secret it follows, the place would read as the download's own URL.
 */
export function shownPlace(url: string, place: string): string {
  return place === `${url}.sha256` ? `${redactSecrets(url)}.sha256` : redactSecrets(place);
}

/** Statuses that say "nothing here": 404, and 403 from a bucket that hides what it does not hold. */
const NOTHING_HERE = [404, 403] as const;

/** A publisher's checksum looked for: found at `at`, or none at any of `looked`. */
export type PublishedChecksum = { readonly hex: string; readonly at: string } | { readonly hex: undefined; readonly looked: readonly string[] };

/**
 * Looks for the checksum a publisher put beside the download at `url` (checksumPlaces,
 * in order; the first found is the one). 404 or 403 at a place is nothing there; when
 * nothing is at every place, none is published (CONTRACT §13). A place that answers 200
 * with no checksum line (a page, or the download itself when the server ignores the
 * query) or with more than a checksum file holds is not "none": when no other place
 * gives a checksum, this throws naming the place and what it answered. Any other failure
 * (another status, a timeout, a cut connection, a list of checksums that names other
 * files only) throws at once: a checksum that cannot be read is not taken as none.
 */
export async function findPublishedChecksum(url: string, name: string, dir: string, options: ProbeOptions): Promise<PublishedChecksum> {
  const looked: string[] = [];
  /** The first place that answered 200 with something that is not a checksum file, and what it was. */
  let unreadable: string | undefined;
  for (const place of checksumPlaces(url)) {
    looked.push(place);
    let outcome;
    try {
      outcome = await download({ url: place, credentials: options.credentials }, dir, { ...timeouts(options), label: null, missingOk: NOTHING_HERE, maxBytes: MAX_CHECKSUM_FILE });
    } catch (error) {
      if (error instanceof TooLargeError) {
        unreadable ??= `${shownPlace(url, place)} answered HTTP 200 with more than ${MAX_CHECKSUM_FILE.toLocaleString("en-US")} bytes, which is no checksum file`;
        continue;
      }
      if (error instanceof DownloadError) throw new DownloadError(`its checksum could not be looked for at ${shownPlace(url, place)}: ${error.message}; refused`);
      throw error;
    }
    if (outcome.kind !== "downloaded") continue;
    const text = readFileSync(outcome.path, "latin1");
    rmSync(outcome.path, { force: true });
    const read = readChecksumFile(text, name);
    if (read.kind === "found") return { hex: read.hex, at: place };
    if (read.kind === "other") throw new DownloadError(`the checksum file at ${shownPlace(url, place)} lists checksums, none of them for ${name}; refused`);
    unreadable ??= `${shownPlace(url, place)} answered HTTP 200 with ${describeAnswer(text)}, which holds no SHA-256 line`;
  }
  if (unreadable !== undefined) throw new DownloadError(`its checksum could not be read: ${unreadable}; only 404 or 403 means none is published; refused`);
  return { hex: undefined, looked };
}

/** What a probe's answer was, for a message: its size and the start of its first line. */
function describeAnswer(text: string): string {
  if (text.trim() === "") return text.length === 0 ? "an empty body" : "a blank body";
  if (/[\x00-\x08\x0e-\x1f]/.test(text.slice(0, 512))) return `${text.length.toLocaleString("en-US")} bytes of binary data`;
  const first = (text.trim().split(/\r?\n/)[0] as string).replace(/[^\x20-\x7e]/g, "?");
  return `${text.length.toLocaleString("en-US")} bytes (${JSON.stringify(first.length > 40 ? `${first.slice(0, 40)}…` : first)})`;
}

function timeouts(options: ProbeOptions): Pick<DownloadOptions, "idleMs" | "connectMs" | "timeoutMs"> {
  return { idleMs: options.idleMs, connectMs: options.connectMs, timeoutMs: options.timeoutMs };
}

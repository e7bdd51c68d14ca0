import { readFileSync, rmSync } from "node:fs";
import { download, DownloadError, TooLargeError, type DownloadOptions } from "./download.ts";
import type { Credentials } from "./locations.ts";

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
  const found: Array<{ hex: string; file?: string }> = [];
  for (const line of text.split(/\r?\n/)) {
    const trimmed = line.trim();
    if (trimmed === "" || trimmed.startsWith("#")) continue;
    const gnu = /^([0-9a-fA-F]{64})(?:\s+\*?(.+))?$/.exec(trimmed);
    const bsd = /^SHA256\s*\((.+)\)\s*=\s*([0-9a-fA-F]{64})$/i.exec(trimmed);
    if (gnu) found.push({ hex: (gnu[1] as string).toLowerCase(), file: gnu[2]?.trim() });
    else if (bsd) found.push({ hex: (bsd[2] as string).toLowerCase(), file: (bsd[1] as string).trim() });
  }
  if (found.length === 1) return found[0]?.hex;
  return found.find((entry) => entry.file !== undefined && (entry.file === name || entry.file.split("/").pop() === name))?.hex;
}

/**
 * Fetches a checksum file and returns the SHA-256 it gives for `name`. `published`:
 * the publisher's `URL.sha256` probed beside a download, which may not exist (any 4xx
 * answer, or a body that holds no checksum: undefined); otherwise the operator named it
 * (`--sha256 URL`), and it must be there and hold one.
 */
export async function fetchChecksum(
  url: string,
  name: string,
  dir: string,
  options: { credentials?: Credentials; published: boolean } & Pick<DownloadOptions, "idleMs">,
): Promise<string | undefined> {
  let outcome;
  try {
    outcome = await download({ url, credentials: options.credentials }, dir, {
      idleMs: options.idleMs,
      label: null,
      missingOk: options.published ? "4xx" : undefined,
      maxBytes: MAX_CHECKSUM_FILE,
    });
  } catch (error) {
    // What answers at URL.sha256 may be no checksum file at all (a server that answers
    // every path, or a query that the suffix changed): too large to be one, it is none.
    if (error instanceof TooLargeError && options.published) return undefined;
    if (error instanceof DownloadError) throw new DownloadError(`its checksum file could not be fetched: ${error.message}`);
    throw error;
  }
  if (outcome.kind !== "downloaded") return undefined;
  const text = readFileSync(outcome.path, "latin1");
  rmSync(outcome.path, { force: true });
  const hex = checksumFor(text, name);
  if (hex === undefined && !options.published) throw new DownloadError(`the checksum file holds no SHA-256 for ${name}`);
  return hex;
}

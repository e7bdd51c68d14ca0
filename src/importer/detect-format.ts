import { parseCsvLine } from "./csv.ts";
import { DELIMITED_FORMATS, type DelimitedFormat } from "./delimited/formats.ts";
import { isRangeBound } from "./delimited/read-delimited.ts";
import { detectFeed } from "./feeds/detect-feed.ts";
import { FEED_FORMATS, type FeedFormat } from "./feeds/feed-entry.ts";

/** The formats a source file can have: MaxMind DB, one of the delimited layouts, or a signal feed (feeds/). */
export type SourceFormat = "mmdb" | DelimitedFormat | FeedFormat;

export const SOURCE_FORMATS: readonly SourceFormat[] = ["mmdb", ...DELIMITED_FORMATS, ...FEED_FORMATS];

/** How much of a file detectFormat wants: the first HEAD_BYTES and the last TAIL_BYTES. */
export const HEAD_BYTES = 64 * 1024;
export const TAIL_BYTES = 128 * 1024;

/**
 * The bytes detectFormat looks at: `head`, the start of the file (up to HEAD_BYTES), and
 * `tail`, its end (up to TAIL_BYTES), where an MMDB file keeps its metadata marker. A
 * small file may be given whole as `head`.
 */
export interface FormatSample {
  readonly head: Uint8Array;
  readonly tail?: Uint8Array;
}

/** Where the metadata section of a MaxMind DB file begins (MMDB spec): "\xAB\xCD\xEFMaxMind.com". */
const MMDB_MARKER = new Uint8Array([0xab, 0xcd, 0xef, ...new TextEncoder().encode("MaxMind.com")]);

/** Compressed files, by their magic bytes, and what to do about them. */
const COMPRESSED: ReadonlyArray<{ readonly magic: readonly number[]; readonly what: string; readonly undo: string }> = [
  { magic: [0x1f, 0x8b], what: "gzip-compressed", undo: "decompress it first (gunzip)" },
  { magic: [0x50, 0x4b, 0x03, 0x04], what: "a zip archive", undo: "extract the file from it first (unzip)" },
  { magic: [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00], what: "xz-compressed", undo: "decompress it first (unxz)" },
  { magic: [0x28, 0xb5, 0x2f, 0xfd], what: "zstd-compressed", undo: "decompress it first (unzstd)" },
  { magic: [0x42, 0x5a, 0x68], what: "bzip2-compressed", undo: "decompress it first (bunzip2)" },
];

/**
 * Tells a source file's format from its bytes:
 * - the MMDB metadata marker (in `tail`, or in `head` for a small file) → "mmdb";
 * - compressed (gzip, zip, xz, zstd, bzip2) → an error saying to decompress it;
 * - else text: the first line that is not blank or a header (a first line whose first
 *   field is not an address or number), split by tabs if it has any, else as CSV —
 *   5 tab-separated fields → "iptoasn-tsv"; 4 fields whose 3rd is an integer →
 *   "asn-csv"; 3 fields whose 3rd is two letters → "country-csv"; 10 fields →
 *   "city-csv" (in each, the first two fields must be addresses or integers);
 * - else a signal feed, if feeds/detect-feed.ts knows it (cloud providers' JSON,
 *   geofeeds, plain lists of addresses);
 * - anything else → an error asking for --format.
 */
export function detectFormat(sample: FormatSample, file: string): SourceFormat {
  const { head, tail } = sample;
  if ((tail !== undefined && contains(tail, MMDB_MARKER)) || contains(head, MMDB_MARKER)) return "mmdb";
  for (const { magic, what, undo } of COMPRESSED) {
    if (startsWith(head, magic)) throw new Error(`${file}: the file is ${what}; ${undo}`);
  }
  const text = head.includes(0) ? undefined : new TextDecoder().decode(head);
  const format = text === undefined ? undefined : (delimitedFormat(text) ?? detectFeed(text));
  if (format === undefined) {
    throw new Error(`${file}: cannot tell the format; name it with --format (${SOURCE_FORMATS.join(", ")})`);
  }
  return format;
}

/** The sample detectFormat wants, from a file's bytes: its head, and its tail when there is more. */
export function formatSampleOf(bytes: Uint8Array): FormatSample {
  const head = bytes.subarray(0, HEAD_BYTES);
  if (bytes.byteLength <= HEAD_BYTES) return { head };
  return { head, tail: bytes.subarray(Math.max(HEAD_BYTES, bytes.byteLength - TAIL_BYTES)) };
}

function delimitedFormat(text: string): DelimitedFormat | undefined {
  let headerSkipped = false;
  for (const rawLine of text.replace(/^\uFEFF/, "").split("\n")) {
    const line = rawLine.endsWith("\r") ? rawLine.slice(0, -1) : rawLine;
    if (line === "") continue;
    const tabs = line.includes("\t");
    let fields: string[];
    if (tabs) {
      fields = line.split("\t");
    } else {
      try {
        fields = parseCsvLine(line);
      } catch {
        fields = line.split(",");
      }
    }
    if (!isRangeBound(fields[0] as string)) {
      if (headerSkipped) return undefined;
      headerSkipped = true;
      continue;
    }
    if (!isRangeBound(fields[1] ?? "")) return undefined;
    const third = fields[2] ?? "";
    if (tabs) return fields.length === 5 ? "iptoasn-tsv" : undefined;
    if (fields.length === 4 && /^[0-9]+$/.test(third)) return "asn-csv";
    if (fields.length === 3 && /^[A-Za-z]{2}$/.test(third)) return "country-csv";
    if (fields.length === 10) return "city-csv";
    return undefined;
  }
  return undefined;
}

function startsWith(bytes: Uint8Array, magic: readonly number[]): boolean {
  return bytes.length >= magic.length && magic.every((byte, i) => bytes[i] === byte);
}

function contains(bytes: Uint8Array, pattern: Uint8Array): boolean {
  const first = pattern[0] as number;
  for (let i = bytes.indexOf(first); i >= 0 && i + pattern.length <= bytes.length; i = bytes.indexOf(first, i + 1)) {
    let j = 1;
    while (j < pattern.length && bytes[i + j] === pattern[j]) j++;
    if (j === pattern.length) return true;
  }
  return false;
}

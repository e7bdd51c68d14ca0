import { constants, createGzip } from "node:zlib";
import { Zip, ZipDeflate } from "fflate";

/**
 * Decompression bombs for tests, made as they are needed without holding what they
 * expand to: `unit` (a block of zeros, or one valid CSV line) repeated until `expandsTo`
 * bytes, gzip-compressed as one member (a 256 MiB bomb of zeros is ~250 KiB) or
 * deflated as the one file of a zip.
 */
export const ZEROS = new Uint8Array(1 << 20);
/** A valid country-csv line: the kind of bomb a check of the first lines lets through. */
export const CSV_LINE = "1.0.0.0,1.0.0.255,AU\n";

function block(unit: Uint8Array | string): Uint8Array {
  if (typeof unit !== "string") return unit;
  return new TextEncoder().encode(unit.repeat(Math.floor((1 << 20) / unit.length)));
}

/** `prefix` goes first (tarHeader: a .tar.gz bomb). */
export async function gzipBomb(unit: Uint8Array | string, expandsTo: number, prefix?: Uint8Array): Promise<Uint8Array> {
  const chunk = block(unit);
  const gzip = createGzip({ level: constants.Z_BEST_COMPRESSION });
  const parts: Buffer[] = [];
  gzip.on("data", (part: Buffer) => parts.push(part));
  const ended = new Promise((resolve, reject) => gzip.on("end", resolve).on("error", reject));
  if (prefix) gzip.write(prefix);
  for (let written = 0; written < expandsTo; written += chunk.byteLength) {
    const piece = chunk.subarray(0, Math.min(chunk.byteLength, expandsTo - written));
    if (!gzip.write(piece)) await new Promise((resolve) => gzip.once("drain", resolve));
  }
  gzip.end();
  await ended;
  return new Uint8Array(Buffer.concat(parts));
}

export function zipBomb(name: string, unit: Uint8Array | string, expandsTo: number): Uint8Array {
  const chunk = block(unit);
  const parts: Uint8Array[] = [];
  const zip = new Zip((error, data) => {
    if (error) throw error;
    parts.push(data);
  });
  const file = new ZipDeflate(name, { level: 9 });
  zip.add(file);
  for (let written = 0; written < expandsTo; written += chunk.byteLength) {
    const last = written + chunk.byteLength >= expandsTo;
    file.push(chunk.subarray(0, Math.min(chunk.byteLength, expandsTo - written)), last);
  }
  zip.end();
  return new Uint8Array(Buffer.concat(parts));
}

/** A POSIX ustar header for one regular file of `size` bytes (its body follows). */
export function tarHeader(name: string, size: number): Uint8Array {
  const header = new Uint8Array(512);
  const put = (at: number, text: string) => header.set(new TextEncoder().encode(text), at);
  put(0, name);
  put(100, "0000644\0");
  put(108, "0000000\0");
  put(116, "0000000\0");
  put(124, `${size.toString(8).padStart(11, "0")}\0`);
  put(136, `${Math.floor(Date.UTC(2026, 10, 1) / 1000).toString(8).padStart(11, "0")}\0`);
  put(148, "        ");
  put(156, "0");
  put(257, "ustar\0");
  put(263, "00");
  const sum = header.reduce((total, byte) => total + byte, 0);
  put(148, `${sum.toString(8).padStart(6, "0")}\0 `);
  return header;
}

import { closeSync, createReadStream, mkdirSync, openSync, readSync, rmSync, statSync } from "node:fs";
import { type FileHandle, open, utimes } from "node:fs/promises";
import { basename, join } from "node:path";
import { createGunzip } from "node:zlib";
import { Unzip, UnzipInflate } from "fflate";
import { createTarDecoder } from "modern-tar";
import { showingControls } from "../../access/plain-text.ts";
import { detectFormat, HEAD_BYTES, TAIL_BYTES, type FormatSample, type SourceFormat } from "../detect-format.ts";
import { writeAll, writeAllSync, writeFailed } from "./disk-writes.ts";
import { COMPRESSED_SLICE, ExpansionBudget, type ExpansionMeter } from "./expansion.ts";
import { UnpackError } from "./unpack-error.ts";

export { UnpackError } from "./unpack-error.ts";

/**
 * Compressed sources, unpacked in a stream onto disk (never whole in memory): `.gz` (one
 * file: DB-IP's `.mmdb.gz` and `.csv.gz`, iptoasn's `.tsv.gz`), tar, `.tar.gz`/`.tgz`
 * (MaxMind's GeoLite2 downloads: a folder with the .mmdb and COPYRIGHT.txt,
 * LICENSE.txt, README) and `.zip`. What a file is comes from its bytes, not its name.
 * gzip is node:zlib's (its output comes 16 KiB at a time, however far the input
 * expands); tar is read with modern-tar, zip with fflate (fed 16 KiB at a time).
 *
 * Bounds, so that a hostile archive cannot fill the disk, the memory or the time: what
 * is unpacked is metered as it comes (expansion.ts: 100 times the compressed bytes read
 * plus 64 MiB, and --max-expanded for the whole import), and an archive holds at most
 * MAX_ENTRIES files. Past a bound the unpacking stops at once and removes the file it
 * was writing. Entries are written under numbered folders by their base name only: a
 * name in an archive never chooses where a file is written (`../../etc/x` is `N/x`).
 */
export const MAX_ENTRIES = 10_000;

export type Container = "gzip" | "tar" | "tar.gz" | "zip";

export interface UnpackedFile {
  readonly path: string;
  /**
   * Its name inside the archive, with its control and bidirectional characters written
   * out (showingControls: it is printed and kept in the data file's record); absent for
   * the file itself or a single gzip-compressed file.
   */
  readonly member?: string;
}

export interface Unpacked {
  /** null: the file is not compressed, and is used where it is. */
  readonly container: Container | null;
  readonly files: readonly UnpackedFile[];
}

const TAR_MAGIC = new TextEncoder().encode("ustar");

/**
 * Unpacks `file` (named `name`, for messages and for the unpacked file's own name) into
 * `dir` when it is compressed; from an archive (tar, zip), keeps the data files, found by
 * their format (detectFormat; with `format`, files of that format). Throws an Error
 * whose message does not name the file: the caller names the source.
 */
export async function unpack(file: string, name: string, dir: string, format?: SourceFormat, budget: ExpansionBudget = new ExpansionBudget()): Promise<Unpacked> {
  const head = await Bun.file(file).slice(0, 512).bytes();
  if (head[0] === 0x1f && head[1] === 0x8b) return unpackGzip(file, name, dir, budget.stream(), format);
  if (startsWithZip(head)) return { container: "zip", files: pickDataFiles(await unzipFile(file, dir, budget.stream()), format) };
  if (isTar(head)) return { container: "tar", files: pickDataFiles(await untar(metered(file, budget.stream()), dir), format) };
  return { container: null, files: [{ path: file }] };
}

async function unpackGzip(file: string, name: string, dir: string, meter: ExpansionMeter, format?: SourceFormat): Promise<Unpacked> {
  const inflated = gunzipped(file, meter);
  const reader: ChunkReader & { cancel(reason?: unknown): Promise<void> } = inflated.getReader();
  // The first block tells a tar inside (.tar.gz) from a single compressed file (.mmdb.gz).
  const parts: Uint8Array[] = [];
  let length = 0;
  while (length < 512) {
    const read = await readOrExplain(reader);
    if (read.done) break;
    parts.push(read.value);
    length += read.value.byteLength;
  }
  const first = Buffer.concat(parts);
  let handedFirst = false;
  const rest = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!handedFirst) {
        handedFirst = true;
        if (first.byteLength > 0) return controller.enqueue(first);
      }
      const read = await readOrExplain(reader);
      if (read.done) controller.close();
      else controller.enqueue(read.value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
  if (isTar(first)) return { container: "tar.gz", files: pickDataFiles(await untar(rest, dir), format) };
  // Named as its archive members are (safeName): `..gz` would otherwise unpack to `..`, the folder itself.
  const inner = safeName(name.replace(/\.tgz$/i, ".tar").replace(/\.gz$/i, "") || "data");
  const path = join(dir, "1", inner === name ? `${name}.unpacked` : inner);
  mkdirSync(join(dir, "1"), { recursive: true });
  await writeStream(rest, path);
  // The unpacked file is as old as what it came from (the download's Last-Modified).
  const { mtime } = statSync(file);
  await utimes(path, mtime, mtime);
  return { container: "gzip", files: [{ path }] };
}

/** A read that turns a decompressor's error into a plain reason. */
async function readOrExplain(reader: ChunkReader): Promise<{ done: true; value?: Uint8Array } | { done: false; value: Uint8Array }> {
  try {
    return await reader.read();
  } catch (error) {
    if (error instanceof UnpackError) throw error;
    throw new UnpackError(`cannot decompress it: ${(error as Error)?.message ?? String(error)}`);
  }
}

interface ChunkReader {
  read(): Promise<{ done: true; value?: Uint8Array } | { done: false; value: Uint8Array }>;
}

/**
 * A gzip file's contents (one member or several, as gunzip reads them), 16 KiB at a
 * time, each chunk metered before it is handed on: the stream fails with the meter's
 * UnpackError as soon as a bound is passed, and reads no further. Pulled, not pushed:
 * nothing is inflated ahead of the reader but what zlib's own buffers hold.
 */
function gunzipped(file: string, meter: ExpansionMeter): ReadableStream<Uint8Array> {
  const input = createReadStream(file, { highWaterMark: COMPRESSED_SLICE });
  const gunzip = createGunzip();
  input.on("data", (chunk) => meter.read(chunk.length));
  input.on("error", (error) => gunzip.destroy(error));
  input.pipe(gunzip);
  const chunks = gunzip[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const close = () => {
    input.destroy();
    gunzip.destroy();
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let next: IteratorResult<Buffer>;
        try {
          next = await chunks.next();
        } catch (error) {
          close();
          throw new UnpackError(`cannot decompress it: ${(error as Error)?.message ?? String(error)}`);
        }
        if (next.done) return controller.close();
        try {
          meter.expand(next.value.byteLength);
        } catch (error) {
          close();
          throw error;
        }
        controller.enqueue(new Uint8Array(next.value.buffer, next.value.byteOffset, next.value.byteLength));
      },
      cancel() {
        close();
      },
    },
    { highWaterMark: 0 },
  );
}

/** An uncompressed file (a plain tar), metered as it is read: its bytes count towards --max-expanded. */
function metered(file: string, meter: ExpansionMeter): ReadableStream<Uint8Array> {
  return Bun.file(file)
    .stream()
    .pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          meter.read(chunk.byteLength);
          meter.expand(chunk.byteLength);
          controller.enqueue(chunk);
        },
      }),
    );
}

async function untar(stream: ReadableStream<Uint8Array>, dir: string): Promise<UnpackedFile[]> {
  const files: UnpackedFile[] = [];
  let entries: ReadableStream<{ header: { name: string; type?: string; mtime?: Date }; body: ReadableStream<Uint8Array> }>;
  try {
    entries = stream.pipeThrough(createTarDecoder({ strict: true }));
  } catch (error) {
    throw new UnpackError(`cannot read the tar archive: ${(error as Error).message}`);
  }
  try {
    for await (const entry of entries) {
      const type = entry.header.type ?? "file";
      if (type !== "file") {
        await entry.body.cancel();
        continue;
      }
      if (files.length >= MAX_ENTRIES) throw new UnpackError(`the archive holds more than ${MAX_ENTRIES} files`);
      const folder = join(dir, String(files.length + 1));
      mkdirSync(folder, { recursive: true });
      const path = join(folder, safeName(entry.header.name));
      await writeStream(entry.body, path);
      const mtime = entry.header.mtime;
      if (mtime instanceof Date && !Number.isNaN(mtime.getTime())) await utimes(path, mtime, mtime);
      files.push({ path, member: showingControls(entry.header.name) });
    }
  } catch (error) {
    if (error instanceof UnpackError) throw error;
    throw new UnpackError(`cannot read the tar archive: ${(error as Error)?.message ?? String(error)}`);
  }
  return files;
}

async function unzipFile(file: string, dir: string, meter: ExpansionMeter): Promise<UnpackedFile[]> {
  const files: UnpackedFile[] = [];
  const open: number[] = [];
  let failure: Error | undefined;
  const unzip = new Unzip();
  unzip.register(UnzipInflate);
  unzip.onfile = (entry) => {
    if (failure || entry.name.endsWith("/")) return;
    if (files.length >= MAX_ENTRIES) {
      failure = new UnpackError(`the archive holds more than ${MAX_ENTRIES} files`);
      return;
    }
    const folder = join(dir, String(files.length + 1));
    mkdirSync(folder, { recursive: true });
    const path = join(folder, safeName(entry.name));
    let fd: number;
    try {
      fd = openSync(path, "wx", 0o600);
    } catch (error) {
      failure = new UnpackError(writeFailed(path, error));
      return;
    }
    open.push(fd);
    files.push({ path, member: showingControls(entry.name) });
    entry.ondata = (error, data, final) => {
      if (failure) return;
      if (error) {
        failure = new UnpackError(`cannot unzip ${showingControls(entry.name)}: ${error.message}`);
        return;
      }
      try {
        meter.expand(data.byteLength);
      } catch (error) {
        failure = error as Error;
        return;
      }
      try {
        writeAllSync(fd, data, path, (reason) => new UnpackError(reason));
      } catch (error) {
        failure = error as Error;
        return;
      }
      if (final) {
        closeSync(fd);
        open.splice(open.indexOf(fd), 1);
      }
    };
    try {
      entry.start();
    } catch {
      failure = new UnpackError(`${showingControls(entry.name)} is compressed with method ${entry.compression}, which iplookup cannot unpack (only stored and deflated files)`);
    }
  };
  try {
    // Fed a slice at a time: what one push inflates (fflate hands it on whole) stays
    // within what a slice can expand to, and the meter sees it before the next.
    for await (const chunk of Bun.file(file).stream()) {
      for (let at = 0; at < chunk.byteLength; at += COMPRESSED_SLICE) {
        const slice = chunk.subarray(at, at + COMPRESSED_SLICE);
        meter.read(slice.byteLength);
        unzip.push(slice, false);
        if (failure) throw failure;
      }
    }
    unzip.push(new Uint8Array(0), true);
    if (failure) throw failure;
    if (open.length > 0) throw new UnpackError("the zip archive ends inside a file");
  } catch (error) {
    if (error instanceof UnpackError) throw error;
    throw new UnpackError(`cannot read the zip archive: ${(error as Error)?.message ?? String(error)}`);
  } finally {
    for (const fd of open) closeSync(fd);
    // A file cut short by a failure goes at once, not when the import's folder does.
    if (failure) for (const unpacked of files) rmSync(unpacked.path, { force: true });
  }
  return files;
}

/**
 * The data files among an archive's files: those whose format detectFormat tells (with
 * `format`, those of that format; failing that, those whose name says so). The others
 * (COPYRIGHT.txt, LICENSE.txt, README) are removed.
 */
function pickDataFiles(files: readonly UnpackedFile[], format?: SourceFormat): UnpackedFile[] {
  const detected = files.map((file) => ({ file, format: formatOf(file.path) }));
  let picked = detected.filter((entry) => entry.format !== undefined && (format === undefined || entry.format === format)).map((entry) => entry.file);
  if (picked.length === 0 && format !== undefined) {
    const extension = format === "mmdb" ? /\.mmdb$/i : /\.(csv|tsv)$/i;
    picked = files.filter((file) => extension.test(file.member ?? file.path));
  }
  if (picked.length === 0) {
    const names = files.map((file) => file.member ?? basename(file.path));
    const listed = names.length === 0 ? "nothing" : `${names.slice(0, 10).join(", ")}${names.length > 10 ? ", …" : ""}`;
    throw new UnpackError(`no data file${format ? ` of format ${format}` : ""} in the archive (it holds ${listed})`);
  }
  for (const file of files) if (!picked.includes(file)) rmSync(file.path, { force: true });
  return picked;
}

function formatOf(path: string): SourceFormat | undefined {
  try {
    return detectFormat(sampleOfFile(path), path);
  } catch {
    return undefined;
  }
}

/** detectFormat's sample read from a file: its head and, when there is more, its tail. */
export function sampleOfFile(path: string): FormatSample {
  const size = statSync(path).size;
  const fd = openSync(path, "r");
  try {
    const read = (from: number, length: number) => {
      const bytes = new Uint8Array(length);
      let done = 0;
      while (done < length) {
        const n = readSync(fd, bytes, done, length - done, from + done);
        if (n === 0) break;
        done += n;
      }
      return bytes.subarray(0, done);
    };
    const head = read(0, Math.min(size, HEAD_BYTES));
    if (size <= HEAD_BYTES) return { head };
    const tailFrom = Math.max(HEAD_BYTES, size - TAIL_BYTES);
    return { head, tail: read(tailFrom, size - tailFrom) };
  } finally {
    closeSync(fd);
  }
}

/** Writes a stream to a new file; a failure removes what was written of it. */
async function writeStream(stream: ReadableStream<Uint8Array>, path: string): Promise<void> {
  let file: FileHandle;
  try {
    file = await open(path, "wx", 0o600);
  } catch (error) {
    throw new UnpackError(writeFailed(path, error));
  }
  try {
    for await (const chunk of stream) await writeAll(file, chunk, path, (reason) => new UnpackError(reason));
  } catch (error) {
    await file.close().catch(() => {});
    rmSync(path, { force: true });
    throw error;
  }
  try {
    await file.close();
  } catch (error) {
    rmSync(path, { force: true });
    throw new UnpackError(writeFailed(path, error));
  }
}

/** An archive member's base name, safe as one file name. */
function safeName(member: string): string {
  const name = member.split(/[/\\]/).filter((part) => part !== "").pop() ?? "";
  const safe = name.replace(/[\p{Cc}\p{Cs}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu, "_").slice(0, 200);
  return safe === "" || safe === "." || safe === ".." ? "file" : safe;
}

function startsWithZip(head: Uint8Array): boolean {
  return head[0] === 0x50 && head[1] === 0x4b && head[2] === 0x03 && head[3] === 0x04;
}

/** A tar header: "ustar" at offset 257 (POSIX "ustar\0" and GNU "ustar  " alike). */
function isTar(head: Uint8Array): boolean {
  if (head.byteLength < 512) return false;
  return TAR_MAGIC.every((byte, i) => head[257 + i] === byte);
}

import { writeSync } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { fileSizeLimit, fileSizeLimitText, systemDisk } from "../../errors/disk-limits.ts";

/**
 * Writing downloads and unpacked files to disk. A write that takes fewer bytes than it
 * was given is a failure: on a disk that fills up, a write writes what fits and answers
 * its count (as write(2) does; Bun's file handles pass it on); the error, ENOSPC, comes
 * only with the next write, and after a file's last chunk there is none. A file
 * cut short so would be read as whole, and a download's SHA-256 is of the bytes as they
 * came, not as they reached the disk. A failure names the file written (so a full disk
 * is told from a bad source); the caller names the source.
 */

/** The writes themselves, as the file system answers them: a test puts its own in to make one fall short. */
export const fileWrites = {
  write: async (file: FileHandle, bytes: Uint8Array): Promise<number> => (await file.write(bytes)).bytesWritten,
  writeSync: (fd: number, bytes: Uint8Array): number => writeSync(fd, bytes),
};

/** Writes all of `bytes` to `file`, open at `path`, or throws `failure(reason)`. */
export async function writeAll(file: FileHandle, bytes: Uint8Array, path: string, failure: (reason: string) => Error): Promise<void> {
  let written: number;
  try {
    written = await fileWrites.write(file, bytes);
  } catch (error) {
    throw failure(writeFailed(path, error));
  }
  if (written !== bytes.byteLength) throw failure(shortWrite(path, written, bytes.byteLength));
}

/** writeAll for a file descriptor, at once. */
export function writeAllSync(fd: number, bytes: Uint8Array, path: string, failure: (reason: string) => Error): void {
  let written: number;
  try {
    written = fileWrites.writeSync(fd, bytes);
  } catch (error) {
    throw failure(writeFailed(path, error));
  }
  if (written !== bytes.byteLength) throw failure(shortWrite(path, written, bytes.byteLength));
}

/** The reason a file could not be opened, written or closed: its path, and "disk full" or the file size limit when it is that. */
export function writeFailed(path: string, error: unknown): string {
  const message = (error as Error)?.message ?? String(error);
  const code = (error as NodeJS.ErrnoException)?.code;
  if (code === "ENOSPC") return `cannot write ${path}: disk full (${message})`;
  if (code === "EFBIG") return `cannot write ${path}: ${sizeLimitReached()} (${message})`;
  return `cannot write ${path}: ${message}`;
}

/**
 * A write cut short: by a full disk, or by the file size limit when the file has reached
 * it (write(2) writes up to the limit and answers its count; EFBIG comes with the next).
 */
function shortWrite(path: string, written: number, length: number): string {
  const counts = `(${written} of ${length} bytes written)`;
  if (atFileSizeLimit(path)) return `cannot write ${path}: ${sizeLimitReached()} ${counts}`;
  return `cannot write ${path}: disk full / short write ${counts}`;
}

/** Whether the file at `path` is as large as this process may make a file (false where that cannot be told). */
function atFileSizeLimit(path: string): boolean {
  const limit = fileSizeLimit();
  const size = systemDisk.fileSize(path);
  return limit !== undefined && size !== undefined && size >= limit;
}

/** What a write that reached the file size limit says of it. */
function sizeLimitReached(): string {
  return `the file size limit was reached (${fileSizeLimitText()})`;
}

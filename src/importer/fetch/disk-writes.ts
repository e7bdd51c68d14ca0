import { writeSync } from "node:fs";
import type { FileHandle } from "node:fs/promises";

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

/** The reason a file could not be opened, written or closed: its path, and "disk full" when it is. */
export function writeFailed(path: string, error: unknown): string {
  const message = (error as Error)?.message ?? String(error);
  return `cannot write ${path}: ${(error as NodeJS.ErrnoException)?.code === "ENOSPC" ? `disk full (${message})` : message}`;
}

function shortWrite(path: string, written: number, length: number): string {
  return `cannot write ${path}: disk full / short write (${written} of ${length} bytes written)`;
}

import { constants, Database } from "bun:sqlite";
import { closeSync, openSync, readSync, realpathSync, statSync } from "node:fs";
import { StateFileError } from "./sqlite-faults.ts";

/** A SQLite file opened by openReadOnly. */
export interface ReadOnlyFile {
  readonly db: Database;
  /**
   * Throws StateFileError when the file was written while it was read without SQLite's
   * locks (see openReadOnly), which may have mixed pages from before and after in what
   * was read. Does not close the connection.
   */
  checkUnchanged(): void;
}

/**
 * Opens a SQLite file (a state file, or a copy of one) for reading only, so that nothing
 * on disk changes: not the file, and no -wal, -shm or journal appears beside it that was
 * not there. It works on a file this process may only read.
 *
 * SQLite opens a file read-only when asked, but a connection to a file in WAL mode still
 * creates the -wal and -shm beside it on its first read when they are missing (a state
 * file no process has open), and, read-only, cannot remove them when it closes: they
 * would stay. Such a file is read as immutable instead (no -wal to read, nothing
 * created, no locks taken): all of it is in the file itself. Without locks, another
 * process that opens the file meanwhile and checkpoints into it could change pages
 * under the reader: checkUnchanged tells, from the file's size and modification time.
 *
 * Otherwise (a file in rollback-journal mode, as `iplookup backup` writes, or one whose
 * -wal another process has open or left with transactions in it) an ordinary read-only
 * connection reads it with SQLite's locks, through the -wal and -shm already there.
 */
export function openReadOnly(path: string): ReadOnlyFile {
  const real = realPath(path);
  if (!readAsImmutable(real)) return { db: new Database(path, { readonly: true }), checkUnchanged() {} };
  const before = stamp(real);
  const db = new Database(`file:${uriPath(real)}?immutable=1`, constants.SQLITE_OPEN_READONLY | constants.SQLITE_OPEN_URI);
  return {
    db,
    checkUnchanged() {
      const after = stamp(real);
      if (before === null || after === null || before !== after) {
        throw new StateFileError(`the state file ${path} was written by another process while this command read it; try again`);
      }
    },
  };
}

/**
 * Whether the file is in WAL mode (bytes 18 and 19 of its header are 2) with no
 * transaction in a -wal beside it: no -wal, or an empty one without its -shm (one with
 * its -shm may belong to a process that has the file open: its locks are then worth
 * taking, and the files are there already). SQLite names them after the file's real path.
 * A file whose header cannot be read is left to SQLite, which says why.
 */
function readAsImmutable(real: string): boolean {
  const header = Buffer.alloc(20);
  try {
    const fd = openSync(real, "r");
    try {
      if (readSync(fd, header, 0, header.length, 0) < header.length) return false;
    } finally {
      closeSync(fd);
    }
  } catch {
    return false;
  }
  if (header[18] !== 2 || header[19] !== 2) return false;
  const wal = sizeOf(`${real}-wal`);
  return wal === null || (wal === 0 && sizeOf(`${real}-shm`) === null);
}

function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** The file's size, or null when there is none (or the system will not tell). */
function sizeOf(path: string): number | null {
  try {
    return statSync(path).size;
  } catch {
    return null;
  }
}

/** What a write changes: the file's identity, size and modification time (ns). */
function stamp(path: string): string | null {
  try {
    const stats = statSync(path, { bigint: true });
    return `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeNs}`;
  } catch {
    return null;
  }
}

/** A path as the path of a SQLite URI (`file:…`): `%`, `?` and `#` escaped, and never `//` first (an authority). */
function uriPath(path: string): string {
  return path.replace(/^\/+/, "/").replace(/[%?#]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

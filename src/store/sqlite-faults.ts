import { dirname } from "node:path";
import { fileSizeLimitText, systemDisk, type DiskReadings } from "../errors/disk-limits.ts";
import { databaseFileProblem, osReason, systemErrorCode } from "../errors/file-access.ts";
import { isDamagedFile, SQLITE_NOTADB, sqlitePrimaryCode as primaryCode } from "../errors/sqlite-codes.ts";
import { StoreUnavailableError } from "./store.ts";

/**
 * SQLite's primary result codes that say the state file cannot be written right now,
 * whatever the statement: the disk (or the file system's quota) is full, the file, its
 * folder or its file system became read-only, the system failed a read or write, a file
 * SQLite needs (the -wal, the -shm, a journal) could not be opened, or the file is
 * damaged (a page that does not hold what SQLite wrote there, a copy cut short, no
 * SQLite file at all), which no read of the damaged pages gets past either (see
 * sqlite-codes.ts for how bun:sqlite gives them). None of them means a statement was
 * wrong; the operator has to free space, fix the file or restore it, and a charge that
 * meets one was rolled back: nothing was charged.
 */
const UNWRITABLE: Record<number, string> = {
  8: "SQLITE_READONLY",
  10: "SQLITE_IOERR",
  11: "SQLITE_CORRUPT",
  13: "SQLITE_FULL",
  14: "SQLITE_CANTOPEN",
  26: "SQLITE_NOTADB",
};

/** SQLITE_BUSY (and its extended codes): the write lock stayed with another connection for the whole busy timeout. */
export function isBusy(error: unknown): boolean {
  return primaryCode(error) === 5;
}

/** Whether a SQLite error means the state file cannot be written right now (see UNWRITABLE). */
export function isUnwritable(error: unknown): boolean {
  const primary = primaryCode(error);
  return primary !== undefined && primary in UNWRITABLE;
}

/**
 * What an unwritable state file's error means, in words, with SQLite's code. With the
 * file's `path`, a failed write (SQLITE_IOERR_*, SQLITE_FULL) is told by what `disk`
 * reads there: the file size limit reached, a full disk, or else the system's failure.
 */
export function unwritableReason(error: unknown, path: string | null = null, disk: DiskReadings = systemDisk): string {
  const { code, message } = error as { code: string; message: string };
  const primary = primaryCode(error);
  if (path !== null && (primary === 10 || primary === 13)) {
    const limit = reachedSizeLimit(path, disk);
    if (limit !== undefined) return `the file size limit was reached (${fileSizeLimitText(limit)}; ${code})`;
    if (primary === 10 && nearlyFull(path, disk)) return `the disk is full (${code})`;
  }
  switch (primary) {
    case 13:
      return `the disk is full (${code})`;
    case 8:
      return `the file, its folder or its file system is read-only (${code})`;
    case 10:
      return `the system failed to read or write it (${code})`;
    case 14:
      return `a file SQLite needs beside it (-wal, -shm) cannot be opened (${code})`;
  }
  return `${message} (${code})`;
}

/**
 * The largest single write SQLite makes to the -wal: one frame, a page of at most 64 KiB
 * and its 24-byte header. A file nearer than this to the file size limit cannot take it.
 */
const LARGEST_WRITE = 65_536 + 24;

/**
 * The file size limit (RLIMIT_FSIZE), when the state file, its -wal or its -shm has
 * reached it: its next write would cross it. SQLite says only SQLITE_IOERR_WRITE (or
 * SQLITE_FULL for a write the system cut short at the limit).
 */
function reachedSizeLimit(path: string, disk: DiskReadings): number | undefined {
  const limit = disk.fileSizeLimit();
  if (limit === undefined) return undefined;
  const reached = [path, `${path}-wal`, `${path}-shm`].some((file) => (disk.fileSize(file) ?? 0) + LARGEST_WRITE > limit);
  return reached ? limit : undefined;
}

/**
 * Less free space than this on the state file's disk makes a failed write a full disk's:
 * SQLite grows the -shm 32 KiB and the -wal a page at a time, and one that finds less
 * room than it needs fails with SQLITE_IOERR_* (SQLITE_IOERR_SHMSIZE for the -shm, as a
 * server meets it when it starts on a full disk), not SQLITE_FULL.
 */
const NEARLY_FULL_BYTES = 1024 * 1024;

function nearlyFull(path: string, disk: DiskReadings): boolean {
  const free = disk.freeBytes(dirname(path));
  return free !== undefined && free < NEARLY_FULL_BYTES;
}

/**
 * What is wrong with the state file (`path`, or the state file unnamed), as the operator
 * reads it: "the state file PATH cannot be written: REASON", or, for a damaged file,
 * what it is and what to do, since no freeing of space nor change of mode helps it.
 */
export function stateFileFault(path: string | null, error: unknown, disk: DiskReadings = systemDisk): string {
  const file = path === null ? "the state file" : `the state file ${path}`;
  if (!isDamagedFile(error)) return `${file} cannot be written: ${unwritableReason(error, path, disk)}`;
  const what = primaryCode(error) === SQLITE_NOTADB ? "is not a SQLite file" : "is damaged";
  return `${file} ${what} (${(error as { code: string }).code}): restore it from a backup (docs/backups.md)`;
}

/**
 * The error a request that needs the unwritable (or damaged) state file fails with: 503
 * store_unavailable with Retry-After, nothing charged. The SQLite error is its cause.
 */
export function unwritableError(path: string, error: unknown, disk: DiskReadings = systemDisk): StoreUnavailableError {
  return new StoreUnavailableError(stateFileFault(path, error, disk), { cause: error });
}

/**
 * A state file that cannot be opened, created or written when a command starts, or that
 * is damaged. Not a StoreError (a bad value, exit 2): the file is where it was asked for,
 * but the system refuses it or its content is broken, and the command exits 1 naming the
 * file and the reason.
 */
export class StateFileError extends Error {
  override readonly name = "StateFileError";
}

/** A state file another process kept its write lock on for the whole busy timeout. */
export class StateFileBusyError extends StateFileError {}

/** SQLite's bare "database is locked", with the file and who holds it. */
export function busyError(path: string, error: unknown): StateFileBusyError {
  return new StateFileBusyError(
    `the state file ${path} is busy: another process holds its write lock (a long transaction, a sqlite3 shell) and kept it while this command waited (SQLITE_BUSY); try again when it is done`,
    { cause: error },
  );
}

/**
 * A failure to open, create or write the state file at `path` when a command starts, as
 * the operator reads it: the path, and the reason as the file system gives it
 * (permission denied, read-only file system, no space left), or SQLite's own when the
 * file system shows nothing. `stage`: what failed, opening the file (reading it
 * included) or writing it.
 */
export function stateFileError(path: string, error: unknown, stage: "open" | "write", disk: DiskReadings = systemDisk): StateFileError {
  const { path: failedPath } = (error ?? {}) as { path?: unknown };
  // A system error (mkdir, open for creation) carries its reason already; SQLite's do not.
  if (systemErrorCode(error) !== null) {
    const where = typeof failedPath === "string" && failedPath !== path ? `${failedPath}: ` : "";
    return new StateFileError(`cannot create the state file ${path}: ${where}${osReason(error)}`, { cause: error });
  }
  if (isDamagedFile(error)) return new StateFileError(stateFileFault(path, error), { cause: error });
  const primary = primaryCode(error);
  // Whatever the stage, the checks look for what writing needs: SQLite finds a folder it
  // cannot create the -shm in (SQLITE_READONLY_DIRECTORY) on the first read.
  const reason = primary === 13 ? unwritableReason(error, path, disk) : (databaseFileProblem(path, true) ?? sqliteReason(error, path, disk));
  const opened = stage === "open" && primary === 14 ? "opened" : "written";
  return new StateFileError(`the state file ${path} cannot be ${opened}: ${reason}`, { cause: error });
}

function sqliteReason(error: unknown, path: string, disk: DiskReadings): string {
  if (isUnwritable(error)) return unwritableReason(error, path, disk);
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return `${String(message ?? error)}${typeof code === "string" ? ` (${code})` : ""}`;
}

/** What SqliteStoreOptions.onWriteFault is told. */
export type WriteFault =
  /** Charges fail: `refused` of them since the last report (or since they started failing). */
  | { readonly writable: false; readonly error: StoreUnavailableError; readonly refused: number }
  /** A charge was written again, after `refused` more failed since the last report. */
  | { readonly writable: true; readonly refused: number };

/** How often a state file that stays unwritable is reported again. */
const REPORT_EVERY_MS = 60_000;

/**
 * Turns the charges that cannot be written into a report now and then: the first
 * failure, then at most one every `everyMs` while they go on, then the first success.
 */
export class WriteFaults {
  private failing = false;
  private lastReport = 0;
  private refused = 0;

  constructor(
    private readonly report: (fault: WriteFault) => void = () => {},
    private readonly now: () => number = () => performance.now(),
    private readonly everyMs = REPORT_EVERY_MS,
  ) {}

  /** A group of `items` charges failed with `error` (unwritable, see isUnwritable). */
  failed(error: StoreUnavailableError, items: number): void {
    this.refused += items;
    const now = this.now();
    if (this.failing && now - this.lastReport < this.everyMs) return;
    this.failing = true;
    this.lastReport = now;
    const refused = this.refused;
    this.refused = 0;
    this.report({ writable: false, error, refused });
  }

  /** A group was written. */
  passed(): void {
    if (!this.failing) return;
    this.failing = false;
    const refused = this.refused;
    this.refused = 0;
    this.report({ writable: true, refused });
  }
}

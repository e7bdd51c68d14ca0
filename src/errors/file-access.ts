import { accessSync, constants, existsSync, statSync } from "node:fs";
import { dirname } from "node:path";

/** The system's words for the error codes a file that cannot be used fails with. */
const REASONS: Record<string, string> = {
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EROFS: "read-only file system",
  ENOSPC: "no space left on the device",
  EDQUOT: "disk quota exceeded",
  ENOENT: "no such file or directory",
  ENOTDIR: "a part of the path is not a directory",
  EISDIR: "it is a directory",
  ELOOP: "too many symbolic links",
  ENAMETOOLONG: "the name is too long",
  EIO: "input/output error",
  EEXIST: "something else is in its place (a file, or a symbolic link to nothing)",
};

/** The system's error code of `error` (EACCES, EROFS, …), or null for an error that is not a system call's. */
export function systemErrorCode(error: unknown): string | null {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === "string" && /^E[A-Z]+$/.test(code) ? code : null;
}

/** A system error (`code` EACCES, EROFS, …) as the operator reads it: "permission denied (EACCES)". */
export function osReason(error: unknown): string {
  const code = systemErrorCode(error);
  if (code !== null) return `${REASONS[code] ?? code.toLowerCase()} (${code})`;
  return String((error as Error | undefined)?.message ?? error);
}

/**
 * Whether there is nothing at `path` (ENOENT, or a part of it that is a file: ENOTDIR).
 * Unlike `!existsSync`, false when the system will not tell (EACCES in a folder this
 * user cannot search): such a file is out of reach, not missing, and opening it says why.
 */
export function isMissing(path: string): boolean {
  try {
    statSync(path);
    return false;
  } catch (error) {
    const code = systemErrorCode(error);
    return code === "ENOENT" || code === "ENOTDIR";
  }
}

/**
 * Why this process cannot read (or, with `write`, also write) the file at `path`, in the
 * system's words, or null when access(2) finds nothing wrong. access(2) checks with the
 * process's real user and group, as the open that failed did, and answers EROFS for a
 * file on a read-only file system even for root.
 */
export function fileAccessProblem(path: string, write: boolean): string | null {
  return accessProblem(path, write ? constants.R_OK | constants.W_OK : constants.R_OK);
}

function accessProblem(path: string, mode: number): string | null {
  try {
    accessSync(path, mode);
    return null;
  } catch (error) {
    return osReason(error);
  }
}

/**
 * Why SQLite cannot open or write the database at `path`, found with the file system's
 * own checks (SQLite's errors name neither path nor system error): its folder, the file,
 * and with `write` the -wal and -shm files beside it and the folder they are created in.
 * Null when none of them shows a problem.
 */
export function databaseFileProblem(path: string, write: boolean): string | null {
  const folder = dirname(path);
  const unsearchable = accessProblem(folder, constants.X_OK);
  if (unsearchable) return `its folder ${folder}: ${unsearchable}`;
  if (!existsSync(path)) {
    if (!write) return osReason({ code: "ENOENT" });
    const cannotCreate = accessProblem(folder, constants.W_OK | constants.X_OK);
    return cannotCreate && `its folder ${folder} is not writable: ${cannotCreate}`;
  }
  if (statSync(path).isDirectory()) return osReason({ code: "EISDIR" });
  const unreadable = fileAccessProblem(path, false);
  if (unreadable || !write) return unreadable;
  const readOnly = fileAccessProblem(path, true);
  // A read-only file system is so for every user; a file's mode, for this one.
  if (readOnly) return readOnly.endsWith("(EROFS)") ? readOnly : `the file is read-only for this user: ${readOnly}`;
  for (const companion of [`${path}-wal`, `${path}-shm`]) {
    if (!existsSync(companion)) continue;
    const problem = fileAccessProblem(companion, true);
    if (problem) return `${companion} cannot be written: ${problem}`;
  }
  const folderProblem = accessProblem(folder, constants.W_OK | constants.X_OK);
  return folderProblem && `its folder ${folder} is not writable, and SQLite creates the -wal and -shm files there: ${folderProblem}`;
}

/**
 * Why a data file could not be opened: the file system's reason (permission denied, no
 * such file) when it shows one, else SQLite's words (SQLite's name no system error).
 */
export function dataFileProblem(path: string, error: unknown): string {
  return databaseFileProblem(path, false) ?? String((error as Error | undefined)?.message ?? error);
}

import { Database } from "bun:sqlite";
import { closeSync, existsSync, openSync, realpathSync, rmSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { osReason, systemErrorCode } from "../errors/file-access.ts";

/**
 * One import or update of a data file at a time (CONTRACT §13): `data update`, `data
 * import` and `serve --update-every`'s update each hold this lock while they fetch,
 * build and install. A second one does not wait: it says that an update is already
 * running and does nothing (a timer or the next `--update-every` round tries again; a
 * wait would pile rounds up behind a slow download).
 *
 * The lock is an exclusive transaction on a small SQLite file beside the data file
 * (`.NAME.update-lock`): SQLite holds it as a POSIX record lock, which the kernel drops
 * when its process ends however it ends (killed, out of memory), so a dead holder never
 * leaves it stuck, and there is no stale file to judge by a pid (a killed holder leaves
 * the file, unlocked: the next update takes it and removes it).
 */
export class UpdateBusyError extends Error {
  override readonly name = "UpdateBusyError";

  constructor(readonly dataPath: string) {
    super(`an update of ${dataPath} is already running (data update, data import or serve --update-every); nothing was done: try again when it has ended`);
  }
}

export interface UpdateLock {
  release(): void;
}

/**
 * The file a data path names: an existing path through its symbolic links (one file, one
 * lock; a new file is renamed over the file, and the link stays a link), else as given.
 */
export function resolvedDataPath(dataPath: string): string {
  try {
    return realpathSync(dataPath);
  } catch {
    return dataPath;
  }
}

/** The lock's file for the data file at `dataPath` (beside the file a link leads to). */
export function updateLockPath(dataPath: string): string {
  const path = resolvedDataPath(dataPath);
  return join(dirname(path), `.${basename(path)}.update-lock`);
}

/**
 * Takes the lock, or throws UpdateBusyError at once when another process (or this one)
 * holds it. The holder removes the file when it is done, before it lets go of the lock,
 * so that nothing stays beside the data file; a process that opened the file just
 * before and locks it just after would then hold a lock on a file no longer there, so
 * the lock counts only if the path still names the file that was locked.
 */
export function takeUpdateLock(dataPath: string): UpdateLock {
  const path = updateLockPath(dataPath);
  for (let attempt = 1; ; attempt++) {
    let before: number;
    let db: Database;
    try {
      closeSync(openSync(path, "a", 0o600));
      before = statSync(path).ino;
      db = new Database(path, { create: true });
    } catch (error) {
      throw lockProblem(dataPath, path, error);
    }
    try {
      db.run("PRAGMA busy_timeout = 0");
      db.run("BEGIN EXCLUSIVE");
    } catch (error) {
      db.close();
      if (/locked|busy/i.test((error as Error)?.message ?? "")) throw new UpdateBusyError(dataPath);
      throw lockProblem(dataPath, path, error);
    }
    if (inodeOf(path) === before) return held(db, path);
    db.run("ROLLBACK");
    db.close();
    if (attempt >= 5) throw new UpdateBusyError(dataPath);
  }
}

/**
 * Why the lock's file cannot be made or locked, naming the data file (the system's
 * words name only the lock's file, which the operator never named).
 */
function lockProblem(dataPath: string, path: string, error: unknown): Error {
  const reason = systemErrorCode(error) === null ? ((error as Error)?.message ?? String(error)) : osReason(error);
  // The file is made owner-only: one another user's update made and holds, or left when it was killed.
  const hint =
    systemErrorCode(error) === "EACCES" && existsSync(path)
      ? "; the file is another user's, from an import or update of this data file that runs, or was killed and left it: when none runs, remove it"
      : "";
  return new Error(`cannot take the update lock of the data file ${dataPath} (${path}): ${reason}${hint}`, { cause: error });
}

function held(db: Database, path: string): UpdateLock {
  let holding = true;
  return {
    release() {
      if (!holding) return;
      holding = false;
      try {
        rmSync(path, { force: true });
        db.run("ROLLBACK");
      } finally {
        db.close();
      }
    },
  };
}

function inodeOf(path: string): number | undefined {
  try {
    return statSync(path).ino;
  } catch {
    return undefined;
  }
}

/** Whether another update of `dataPath` runs now (the lock taken and released at once). */
export function updateRunning(dataPath: string): boolean {
  try {
    takeUpdateLock(dataPath).release();
    return false;
  } catch (error) {
    if (error instanceof UpdateBusyError) return true;
    throw error;
  }
}

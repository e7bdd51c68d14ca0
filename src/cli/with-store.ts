import { rmdirSync } from "node:fs";
import { dirname } from "node:path";
import { isFilePath } from "../config/paths.ts";
import { isMissing } from "../errors/file-access.ts";
import { readSetting } from "../config/settings.ts";
import { openStore } from "../store/open-store.ts";
import { busyError, isBusy, isUnwritable, StateFileBusyError, stateFileError } from "../store/sqlite-faults.ts";
import { removeStateFiles } from "../store/sqlite-store.ts";
import type { Store } from "../store/store.ts";
import type { CliContext } from "./command.ts";

/** How a command opens the state. */
export type WithStoreOptions =
  | {
      /**
       * Whether a state that does not exist yet is created (`keys create`, `plans set`).
       * Commands that only read or change what is there pass false: a mistyped --state is
       * then refused (StateNotFoundError, exit 1) and nothing is created (CONTRACT §12).
       */
      readonly create: boolean;
      readonly readOnly?: false;
    }
  | {
      readonly create: false;
      /**
       * For a command that only reads (`keys list`, `usage`, `state copy`'s source, …):
       * the state is not changed in any way, not even migrated, so that a state an older
       * iplookup wrote (a backup kept to go back to) stays one it can open, and a file
       * this user may only read is read (see SqliteStoreOptions.readOnly and
       * PostgresStoreOptions.readOnly).
       */
      readonly readOnly: true;
    };

/**
 * Opens the state named by `--state` / IPLOOKUP_STATE (a SQLite file, or a PostgreSQL
 * database for a `postgres://` URL: see openStore), runs `work`, and closes it.
 * A command that fails on a state file it had to create removes it again, with the
 * directories made for it, so a refused command leaves nothing behind.
 */
export async function withStore<T>(
  flags: Readonly<Record<string, unknown>>,
  context: CliContext,
  options: WithStoreOptions,
  work: (store: Store) => Promise<T>,
): Promise<T> {
  return withStoreAt(readSetting("state", flags, context.env), options, work);
}

/** withStore on a location given by the command itself (`state copy --from … --to …`). */
export async function withStoreAt<T>(path: string, options: WithStoreOptions, work: (store: Store) => Promise<T>): Promise<T> {
  // Reading creates nothing, so there is nothing of its own to remove after.
  const created = isFilePath(path) && !options.readOnly ? missingFiles(path) : [];
  let store: Store;
  try {
    store = await openStore(path, { create: options.create, readOnly: options.readOnly === true });
  } catch (error) {
    // Busy: another process has the file open, maybe the one that created it since.
    if (!(error instanceof StateFileBusyError || isBusy(error))) removeCreated(created);
    if (isFilePath(path) && isBusy(error)) throw busyError(path, error);
    throw error;
  }
  try {
    const result = await work(store);
    await store.close();
    return result;
  } catch (error) {
    await store.close();
    removeCreated(created);
    // A full disk, a file made read-only: named with the file and the reason, as serve names them.
    if (isFilePath(path) && isUnwritable(error)) throw stateFileError(path, error, "write");
    if (isFilePath(path) && isBusy(error)) throw busyError(path, error);
    throw error;
  }
}

/**
 * The state file and its directories that do not exist yet, the file first, then deepest
 * first. One the system will not tell about (a folder this user cannot search) is not
 * counted missing: the command cannot have made it, and must not try to remove it.
 */
function missingFiles(path: string): string[] {
  if (!isMissing(path)) return [];
  const missing = [path];
  for (let directory = dirname(path); isMissing(directory) && directory !== dirname(directory); directory = dirname(directory)) {
    missing.push(directory);
  }
  return missing;
}

/** Removes what a failed command made; a removal that fails is let be, so the command's own error is the one told. */
function removeCreated([file, ...directories]: readonly string[]): void {
  if (file === undefined) return;
  removeStateFiles(file);
  // rmdir, never a recursive removal: a directory someone else has put a file in since stays.
  for (const directory of directories) {
    try {
      rmdirSync(directory);
    } catch {
      return;
    }
  }
}

import type { Database } from "bun:sqlite";
import { closeSync, existsSync, fsyncSync, linkSync, openSync, renameSync, statSync } from "node:fs";
import { basename, dirname } from "node:path";
import { ConfigError } from "../../config/config-error.ts";
import { absolutePath, isFilePath } from "../../config/paths.ts";
import { isMissing } from "../../errors/file-access.ts";
import { readSetting } from "../../config/settings.ts";
import { schemaVersion } from "../../store/schema.ts";
import { openReadOnly } from "../../store/sqlite-read-only.ts";
import { StateFileError, stateFileError } from "../../store/sqlite-faults.ts";
import { StateNotFoundError, StoreError } from "../../store/store.ts";
import { vacuumIntoOnThread } from "../../store/vacuum-into.ts";
import { parseCommandArgs } from "../args.ts";
import { STATE_FLAG_HELP } from "../flag-help.ts";
import type { Command } from "../command.ts";
import { EXIT_OK } from "../io.ts";
import { cleaningUpOnStop, signalsHandled } from "../stop-signals.ts";
import { partialPath, removeLeftoverPartials, removePartial } from "./backup-partials.ts";

/** The thread that copies, from source (the compiled binary names its own: CliContext.workerEntry). */
const WORKER_ENTRY = new URL("../../serve/worker-thread.ts", import.meta.url).href;

export const backupCommand: Command = {
  name: "backup",
  summary: "copy the state file consistently, while the server runs",
  help: `Usage: iplookup backup FILE [--state PATH]

Writes a consistent copy of the state file (keys, plans, usage) to FILE, which must not
exist yet. Safe while servers are running: SQLite's VACUUM INTO reads one snapshot,
and writers carry on meanwhile. The copy is readable by its owner only; it appears
under its name only once it is complete, and a failed backup leaves nothing behind: nor
does one stopped by SIGTERM, SIGINT or SIGHUP (it exits 128 + the signal's number; once
the copy has its name, it finishes and exits 0).

${STATE_FLAG_HELP}`,
  async run(argv, context) {
    const { flags, positionals } = parseCommandArgs(argv, { settings: ["state"], positionals: [1, 1], arguments: ["FILE"] });
    const target = absolutePath(positionals[0] as string);
    const state = readSetting("state", flags, context.env);
    if (!isFilePath(state)) throw new ConfigError(`backup copies a SQLite state file; ${state} is not one`);
    if (!isFilePath(target)) throw new ConfigError(`the backup is written to a file; ${target} is not one`);
    if (isMissing(state)) throw new StateNotFoundError(`there is no state file at ${state}`);
    if (existsSync(target)) throw new ConfigError(`${target} exists already; choose a new file`);
    if (!isDirectory(dirname(target))) throw new ConfigError(`there is no directory ${dirname(target)} to write ${basename(target)} in`);
    await backUp(state, target, context.workerEntry ?? WORKER_ENTRY);
    context.io.out(`Backed up ${state} to ${target}.`);
    return EXIT_OK;
  },
};

/**
 * Copies the state file to `target` through a file beside it: created owner-only (0600)
 * and exclusively before the first byte is written, filled by VACUUM INTO (which accepts
 * an empty file and keeps its mode), flushed to disk, then linked to its name. So the
 * copy is never readable by others, `target` names only a complete copy (a backup cut
 * short by a crash or a full disk is never mistaken for one), and a failure or a stop
 * signal removes the partial copy; what a killed backup left is removed by a later one.
 */
async function backUp(state: string, target: string, workerEntry: string): Promise<void> {
  try {
    checkStateFile(state);
    removeLeftoverPartials(target);
  } catch (error) {
    throw backupFailure(error, state, target);
  }
  const partial = partialPath(target);
  await cleaningUpOnStop(
    () => removePartial(partial),
    async (committed) => {
      closeSync(openSync(partial, "wx", 0o600));
      try {
        await vacuumIntoOnThread(workerEntry, state, partial);
        const fd = openSync(partial, "r");
        try {
          fsyncSync(fd);
        } finally {
          closeSync(fd);
        }
        // A stop signal that came during the flush is handled before the copy gets its name.
        await signalsHandled();
        committed();
        publish(partial, target);
      } catch (error) {
        throw backupFailure(error, state, target);
      } finally {
        removePartial(partial);
      }
    },
  );
  syncDirectory(dirname(target));
}

/**
 * Refuses, before anything is written, a file that is not a state file. The state file
 * is only read, as the copy reads it: a backup changes nothing of it (see openReadOnly).
 */
function checkStateFile(state: string): void {
  let db: Database;
  try {
    db = openReadOnly(state).db;
  } catch (error) {
    if (isMissing(state)) throw new StateNotFoundError(`there is no state file at ${state}`);
    throw stateFileError(state, error, "open");
  }
  try {
    db.run("PRAGMA busy_timeout = 10000");
    schemaVersion(db, state);
  } finally {
    db.close();
  }
}

/** What a backup that failed says: its own errors as they are, any other with the files and the reason. */
function backupFailure(error: unknown, state: string, target: string): Error {
  if (error instanceof ConfigError || error instanceof StoreError || error instanceof StateFileError) return error;
  if ((error as { code?: unknown }).code === "SQLITE_NOTADB") return new StoreError(`${state} is not an iplookup state file (not a SQLite database)`);
  return new Error(`cannot back up ${state} to ${target}: ${(error as Error).message}; nothing was written`);
}

/**
 * Gives the complete copy its name without ever replacing a file: link(2) fails if the
 * name exists, even one made a moment ago by someone else. On a file system without hard
 * links, a rename after one more look is the best there is.
 */
function publish(partial: string, target: string): void {
  try {
    linkSync(partial, target);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST") throw new ConfigError(`${target} exists already; choose a new file`);
    if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP") throw error;
    if (existsSync(target)) throw new ConfigError(`${target} exists already; choose a new file`);
    renameSync(partial, target);
  }
}

/** Makes the new name durable too; a file system that cannot sync a directory is left as it is. */
function syncDirectory(directory: string): void {
  try {
    const fd = openSync(directory, "r");
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {}
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

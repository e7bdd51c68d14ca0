import { constants, type Database } from "bun:sqlite";
import { fstatSync, ftruncateSync, readdirSync, realpathSync, statSync, unlinkSync } from "node:fs";
import { StoreUnavailableError } from "./store.ts";

/**
 * The state file, its -wal or its -shm is no longer the file a connection opened: it was
 * removed, or another file took its name (`mv` of another state over it, `rm` of the
 * -wal and -shm). The connection still holds the files it opened, which nobody else will
 * read: it reads and writes nothing more, and answers 503 store_unavailable.
 */
export class StateFileChangedError extends StoreUnavailableError {
  override readonly name: string = "StateFileChangedError";
}

/** A file's device and inode numbers; null when there is no file at the path. */
type FileId = { readonly dev: bigint; readonly ino: bigint } | null;

/** A file as opened, and what to call it. */
interface Opened {
  readonly path: string;
  readonly id: FileId;
}

/**
 * Which files a SQLite connection on a state file opened: the file, and the -wal and -shm
 * beside it, by device and inode, so that a file removed or replaced under it is told.
 *
 * SQLite keeps each of them open by its descriptor and finds the -wal and -shm by name
 * only when it opens them. A process that comes later opens what has those names then:
 * with the -wal and -shm removed, new ones, so it shares neither locks nor a WAL with the
 * connections opened before; with the state file replaced, the new file, read through
 * the old one's -wal. And the last connection to close deletes the -wal by name, though
 * another process's WAL may have it now. So a connection that finds its files changed
 * uses them no more (see StateFileChangedError), and closes with closeKeepingFiles.
 *
 * While the connection is open, SQLite itself never removes or replaces these files
 * (another process's last close finds this connection's lock and leaves them), so any
 * change is another program's.
 */
export class StateFileIdentity {
  private change: StateFileChangedError | null = null;
  private checkedAt = performance.now();

  private constructor(
    private readonly state: Opened,
    private readonly beside: readonly Opened[],
  ) {}

  /**
   * The files at `path` now: called once a connection has opened the file in WAL mode
   * (so its -wal and -shm exist). SQLite names them after the file's real path (a
   * symbolic link followed).
   */
  static of(path: string): StateFileIdentity {
    let real = path;
    try {
      real = realpathSync(path);
    } catch {}
    return new StateFileIdentity(
      { path, id: idOf(path) ?? null },
      [`${real}-wal`, `${real}-shm`].map((file) => ({ path: file, id: idOf(file) ?? null })),
    );
  }

  /** What a check found changed (it stays so), without looking again. */
  get changed(): StateFileChangedError | null {
    return this.change;
  }

  /**
   * Looks at the files now: the change found, now or before; null while each is the file
   * opened. Once the state file itself is not the one opened, that alone is told: its old
   * -wal and -shm are then removed by this process (removeLeftovers), which another
   * thread's check may find first, and the operator did not remove them.
   */
  check(): StateFileChangedError | null {
    this.checkedAt = performance.now();
    if (this.change) return this.change;
    const removed: string[] = [];
    const replaced: string[] = [];
    const stateNow = idOf(this.state.path);
    const stateChanged = stateNow !== undefined && !sameFile(stateNow, this.state.id);
    for (const file of stateChanged ? [this.state] : [this.state, ...this.beside]) {
      const now = idOf(file.path);
      if (now !== undefined && !sameFile(now, file.id)) (now === null ? removed : replaced).push(file.path);
    }
    const told = [said(removed, "removed"), said(replaced, replaced.length === 1 ? "replaced by another file" : "replaced by other files")].filter((part) => part !== "");
    if (told.length > 0) this.change = new StateFileChangedError(`${told.join("; ")} while in use`);
    return this.change;
  }

  /** check(), unless the last was less than `everyMs` ago: then what it found. */
  checkEvery(everyMs: number): StateFileChangedError | null {
    return this.change ?? (performance.now() - this.checkedAt < everyMs ? null : this.check());
  }

  /**
   * Once the state file is not the one opened (removed, or another in its place): removes
   * the -wal and -shm beside it that are still the ones opened. They belong to a file
   * that is gone from this path, and whoever opens the file there now would read it
   * through them (a state restored by `mv` would be read with the old state's pages).
   * Files another process has made since are left alone.
   */
  removeLeftovers(): void {
    const now = idOf(this.state.path);
    if (now === undefined || sameFile(now, this.state.id)) return;
    for (const file of this.beside) {
      if (file.id === null || !sameFile(idOf(file.path) ?? null, file.id)) continue;
      try {
        unlinkSync(file.path);
      } catch {}
    }
  }

  /**
   * Empties the -wal this process opened once no name leads to it any more (removed, or
   * another file in its place). What it holds no other process saw, and the last close
   * would copy it into the state file, over pages other processes have written since
   * through a WAL of their own, which overrides some of them and not others: that mix
   * damages the file. Emptied, the close copies nothing (its reads find no frames).
   * Found among the process's descriptors (/dev/fd); where the system lists none, it is
   * left as it is.
   */
  emptyOrphanedWal(): void {
    const wal = this.beside[0]?.id;
    if (!wal) return;
    let descriptors: string[];
    try {
      descriptors = readdirSync("/dev/fd");
    } catch {
      return;
    }
    for (const name of descriptors) {
      try {
        const stats = fstatSync(Number(name), { bigint: true });
        if (stats.dev === wal.dev && stats.ino === wal.ino && stats.nlink === 0n) ftruncateSync(Number(name), 0);
      } catch {}
    }
  }
}

/**
 * Closes a connection whose files changed (see StateFileChangedError) without touching
 * the files that now have their names. SQLite's last close (a process closes every
 * connection at exit) copies what its WAL holds into the state file, then deletes the
 * -wal and the -shm by name, which may be another process's now (its WAL holds its
 * commits): the copy finds an emptied WAL (emptyOrphanedWal), or the state file moved
 * away (SQLite then copies nothing), and the deletion is turned off.
 */
export function closeKeepingFiles(db: Database, files: StateFileIdentity): void {
  files.emptyOrphanedWal();
  db.fileControl(constants.SQLITE_FCNTL_PERSIST_WAL, 1);
  db.close();
}

/**
 * The connection, which refuses any use (StateFileChangedError) once its files changed,
 * looked at again at most every `everyMs` while it is used.
 */
export function guardedConnection(db: Database, identity: StateFileIdentity, everyMs: number): Database {
  return new Proxy(db, {
    get(target, property) {
      const change = identity.checkEvery(everyMs);
      if (change) throw change;
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** The file's identity; undefined when the system will not tell (a folder made unreadable): no change is told then. */
function idOf(path: string): FileId | undefined {
  try {
    const stats = statSync(path, { bigint: true, throwIfNoEntry: false });
    return stats ? { dev: stats.dev, ino: stats.ino } : null;
  } catch (error) {
    return (error as { code?: unknown }).code === "ENOTDIR" ? null : undefined;
  }
}

/** "A and B were removed", "A was removed", or "" for none. */
function said(paths: readonly string[], what: string): string {
  if (paths.length === 0) return "";
  const named = paths.length === 1 ? paths[0] : `${paths.slice(0, -1).join(", ")} and ${paths[paths.length - 1]}`;
  return `${named} ${paths.length === 1 ? "was" : "were"} ${what}`;
}

function sameFile(a: FileId, b: FileId): boolean {
  return a === null || b === null ? a === b : a.dev === b.dev && a.ino === b.ino;
}

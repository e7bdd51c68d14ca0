import { Database } from "bun:sqlite";
import { statSync } from "node:fs";
import { closeKeepingFiles, StateFileIdentity } from "./state-file-identity.ts";

/**
 * A server's checkpoints of its SQLite state file, run on a thread of their own.
 *
 * In WAL mode with `synchronous=NORMAL` (see SqliteStore) a commit only appends to the
 * -wal file; the fsync happens when the WAL is copied back into the database, at a
 * checkpoint. SQLite runs that checkpoint itself, on whichever connection's commit
 * takes the WAL past 1,000 pages: on a server, a charge on a serving thread, which then
 * waits for the fsync (8–71 ms every couple of seconds under load, the whole of the
 * lookups' p99). So a server's connections are opened with `walAutoCheckpoint: false`
 * and this loop, on its own thread, runs a PASSIVE checkpoint every `intervalMs`:
 * PASSIVE takes no lock a writer waits for, copies what no reader still needs, and does
 * no I/O when it finds nothing new.
 *
 * Copying the WAL does not make it shorter. SQLite starts the WAL again from its
 * beginning only in a writer that begins its transaction while every frame is copied
 * (nBackfill = mxFrame in the WAL index) and no reader holds a snapshot that uses the
 * WAL (wal.c, walRestartLog). Under sustained load another process's commit always
 * lands while a PASSIVE checkpoint runs (it syncs the WAL and the file), so that
 * moment never came: every checkpoint copied every frame it saw, and the WAL still grew
 * by every commit, ~25 MB/s with two workers. So once the WAL passes
 * `restartAfterBytes`, the PASSIVE checkpoint, which did the bulk of the copying, is
 * followed by a RESTART one: it takes the write lock (writers wait, or with
 * `lockWaitMs` retry, for as long as it copies the frames the PASSIVE one missed and
 * syncs), waits for the readers still on the WAL, and so the next writer starts the
 * WAL again from its beginning: the file stays about as long as what the server
 * appends between two checkpoints. Its busy timeout (`restartBusyMs`) is short: a
 * RESTART that meets a long reader gives up, writers go on, the next interval tries
 * again. Once the server is idle (the WAL all copied and unchanged since the previous
 * checkpoint) a TRUNCATE checkpoint empties the -wal file, so it does not keep the
 * size it reached under load.
 *
 * Before each interval's checkpoints it looks whether the state file, its -wal and its
 * -shm are still the files it opened (see StateFileIdentity). Once one is not, it
 * checkpoints no more (the WAL it holds is no longer the one other processes use, and
 * copying it into the file would mix two histories), removes the old -wal and -shm if
 * the state file itself is gone from the path (so that the file there now is not read
 * through them), and closes with closeKeepingFiles.
 */
export interface WalCheckpoints {
  /** Runs one last checkpoint and closes the connection. */
  stop(): void;
  /** What the checkpoints did so far. */
  readonly stats: Readonly<WalCheckpointStats>;
}

/** Counts of a WalCheckpoints' work. */
export interface WalCheckpointStats {
  /** PASSIVE checkpoints run. */
  passive: number;
  /** RESTART checkpoints that completed: the next writer starts the WAL from its beginning. */
  restarts: number;
  /** TRUNCATE checkpoints that emptied the -wal file of an idle server. */
  truncations: number;
  /** RESTART or TRUNCATE checkpoints that gave up on a lock (tried again at a later interval). */
  busy: number;
  /** The longest RESTART or TRUNCATE checkpoint, in milliseconds: the most a writer waited for one. */
  longestMs: number;
}

/** Options of runWalCheckpoints. */
export interface WalCheckpointOptions {
  /** The WAL's length (its frames, headers included) from which a RESTART follows the PASSIVE checkpoint. */
  readonly restartAfterBytes?: number;
  /** How long a RESTART or TRUNCATE checkpoint waits for a writer or a reader before it gives up. */
  readonly restartBusyMs?: number;
  /** Told after every interval's checkpoints that ran: the counts so far and the -wal file's length then, in bytes. */
  readonly onRun?: (stats: Readonly<WalCheckpointStats>, walBytes: number) => void;
}

/** 4 MiB: about SQLite's own automatic checkpoint (1,000 pages of 4 KiB). */
const RESTART_AFTER_BYTES = 4 * 1024 * 1024;
/**
 * How long a RESTART may wait for a lock. A writer holds the write lock well under a
 * millisecond, a serving thread's read transaction as long; SQLite's busy handler
 * sleeps 1, 2, then 5 ms between its tries.
 */
const RESTART_BUSY_MS = 3;

/** What `PRAGMA wal_checkpoint` answers. */
interface CheckpointRow {
  busy: number;
  log: number;
  checkpointed: number;
}

export function runWalCheckpoints(path: string, intervalMs: number, onError: (error: unknown) => void, options: WalCheckpointOptions = {}): WalCheckpoints {
  const restartAfterBytes = options.restartAfterBytes ?? RESTART_AFTER_BYTES;
  const restartBusyMs = options.restartBusyMs ?? RESTART_BUSY_MS;
  const db = new Database(path, { readwrite: true, create: false });
  // PASSIVE never calls the busy handler; this bounds RESTART's and TRUNCATE's waits.
  db.run(`PRAGMA busy_timeout = ${restartBusyMs}`);
  const frameBytes = (db.query("PRAGMA page_size").get() as { page_size: number }).page_size + 24;
  // A read opens the -wal and -shm (making them, if this is the file's only connection).
  db.query("SELECT count(*) FROM sqlite_master").get();
  const files = StateFileIdentity.of(path);
  const passive = db.query<CheckpointRow, []>("PRAGMA wal_checkpoint(PASSIVE)");
  const restart = db.query<CheckpointRow, []>("PRAGMA wal_checkpoint(RESTART)");
  const truncate = db.query<CheckpointRow, []>("PRAGMA wal_checkpoint(TRUNCATE)");
  const stats: WalCheckpointStats = { passive: 0, restarts: 0, truncations: 0, busy: 0, longestMs: 0 };
  /** The WAL's frames at the previous checkpoint, when it was all copied then; -1 otherwise. */
  let copiedBefore = -1;
  const blocking = (statement: typeof restart): boolean => {
    const started = performance.now();
    const row = statement.get() as CheckpointRow;
    stats.longestMs = Math.max(stats.longestMs, performance.now() - started);
    if (row.busy !== 0) stats.busy++;
    return row.busy === 0;
  };
  let failing = false;
  const run = () => {
    if (files.changed) return;
    if (files.check()) {
      clearInterval(timer);
      files.removeLeftovers();
      return;
    }
    try {
      const { log, checkpointed } = passive.get() as CheckpointRow;
      stats.passive++;
      const idle = log > 0 && log === checkpointed && log === copiedBefore;
      copiedBefore = log === checkpointed ? log : -1;
      if (idle) {
        if (blocking(truncate)) {
          stats.truncations++;
          copiedBefore = -1;
        }
      } else if (log * frameBytes >= restartAfterBytes) {
        if (blocking(restart)) stats.restarts++;
      }
      failing = false;
      options.onRun?.(stats, statSync(`${path}-wal`, { throwIfNoEntry: false })?.size ?? 0);
    } catch (error) {
      // Told once, not every interval, while it keeps failing.
      if (!failing) onError(error);
      failing = true;
    }
  };
  const timer = setInterval(run, intervalMs);
  return {
    stats,
    stop() {
      clearInterval(timer);
      run();
      for (const statement of [passive, restart, truncate]) statement.finalize();
      if (files.changed) closeKeepingFiles(db, files);
      else db.close();
    },
  };
}

import { Database } from "bun:sqlite";

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
 * PASSIVE takes no lock a writer waits for, copies what no reader still needs, and
 * lets the next writer start the WAL again from its beginning once all of it is copied.
 * A checkpoint that finds nothing new does no I/O.
 */
export interface WalCheckpoints {
  /** Runs one last checkpoint and closes the connection. */
  stop(): void;
}

export function runWalCheckpoints(path: string, intervalMs: number, onError: (error: unknown) => void): WalCheckpoints {
  const db = new Database(path, { readwrite: true, create: false });
  // A checkpoint never waits for a lock: one that finds the WAL busy is left to the next.
  db.run("PRAGMA busy_timeout = 0");
  const checkpoint = db.query("PRAGMA wal_checkpoint(PASSIVE)");
  let failing = false;
  const run = () => {
    try {
      checkpoint.get();
      failing = false;
    } catch (error) {
      // Told once, not every interval, while it keeps failing.
      if (!failing) onError(error);
      failing = true;
    }
  };
  const timer = setInterval(run, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      run();
      checkpoint.finalize();
      db.close();
    },
  };
}

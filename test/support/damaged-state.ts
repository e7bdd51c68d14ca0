import { Database } from "bun:sqlite";
import { closeSync, openSync, writeSync } from "node:fs";

/**
 * Damages a state file as a failing disk or a bad copy does: the root page of `table`
 * overwritten with bytes that are no page of SQLite's, once a checkpoint has moved every
 * commit into the file (a WAL would hide the page). SQLite then answers SQLITE_CORRUPT
 * ("database disk image is malformed") to each statement that reads the table, and
 * opens the file as before.
 */
export function damageTable(path: string, table: string): void {
  const db = new Database(path);
  const { rootpage } = db.query<{ rootpage: number }, [string]>("SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = ?1").get(table)!;
  const { page_size } = db.query<{ page_size: number }, []>("PRAGMA page_size").get()!;
  db.run("PRAGMA wal_checkpoint(TRUNCATE)");
  db.close();
  const fd = openSync(path, "r+");
  try {
    writeSync(fd, new Uint8Array(page_size).fill(0xa5), 0, page_size, (rootpage - 1) * page_size);
  } finally {
    closeSync(fd);
  }
}

import type { Database } from "bun:sqlite";
import type { SqliteStore } from "../../src/store/sqlite-store.ts";

/**
 * Makes the store's own connection find its file full, as on a full disk: SQLite's
 * max_page_count (a setting of the connection) is capped at the file's size, then the
 * usage table is filled with rows the size of a charge's own (another key period each,
 * same length) until SQLite answers SQLITE_FULL. A charge that must add a usage row then
 * fails with SQLITE_FULL from SQLite itself, the error a full disk gives. The connection
 * is the store's private one: no other connection's setting would apply to it.
 */
export function fillStateFile(store: SqliteStore, keyId: string): void {
  const db = (store as unknown as { db: Database }).db;
  const { page_count } = db.query<{ page_count: number }, []>("PRAGMA page_count").get()!;
  db.run(`PRAGMA max_page_count = ${page_count}`);
  const insert = db.query("INSERT INTO usage (key_id, period, used) VALUES (?1, ?2, 0)");
  for (let n = 0; ; n++) {
    try {
      insert.run(keyId, `${1000 + Math.floor(n / 12)}-${String((n % 12) + 1).padStart(2, "0")}`);
    } catch (error) {
      if ((error as { code?: unknown }).code === "SQLITE_FULL") return;
      throw error;
    }
  }
}

import { SQL } from "bun";

/**
 * Runs `work` on one connection of its own to a PostgreSQL URL's database, closed after:
 * a look at a database that opens no store, so creates and migrates nothing (see
 * PostgresStore.open, which does both).
 */
export async function peekPostgres<T>(url: string, work: (sql: SQL) => Promise<T>): Promise<T> {
  // The database named explicitly, as PostgresStore names it: Bun lets PGDATABASE
  // override the database of a URL.
  const database = decodeURIComponent(new URL(url).pathname.replace(/^\//, ""));
  const sql = new SQL(url, { ...(database !== "" ? { database } : {}), max: 1, connectionTimeout: 5, connection: { application_name: "iplookup" } });
  try {
    return await work(sql);
  } finally {
    await sql.close({ timeout: 0 }).catch(() => {});
  }
}

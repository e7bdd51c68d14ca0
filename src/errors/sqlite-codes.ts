/**
 * SQLite's result codes as bun:sqlite's SQLiteError carries them: the extended code as
 * `errno` (SQLITE_IOERR_WRITE is 778; `errno & 0xff` is the primary code) and its name as
 * `code` (https://sqlite.org/rescode.html).
 */

/** The primary code of a SQLite error, or undefined for anything else. */
export function sqlitePrimaryCode(error: unknown): number | undefined {
  const { errno, code } = (error ?? {}) as { errno?: unknown; code?: unknown };
  if (typeof code !== "string" || !code.startsWith("SQLITE_") || typeof errno !== "number") return undefined;
  return errno & 0xff;
}

/** SQLITE_CORRUPT: pages that do not hold what SQLite wrote there (a copy cut short, a page changed on disk). */
export const SQLITE_CORRUPT = 11;
/** SQLITE_NOTADB: no SQLite file where one was expected (its header is not SQLite's). */
export const SQLITE_NOTADB = 26;

/** Whether a SQLite error says the file itself is damaged (SQLITE_CORRUPT, SQLITE_NOTADB), whatever the statement. */
export function isDamagedFile(error: unknown): boolean {
  const primary = sqlitePrimaryCode(error);
  return primary === SQLITE_CORRUPT || primary === SQLITE_NOTADB;
}

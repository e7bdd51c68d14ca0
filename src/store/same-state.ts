import { statSync } from "node:fs";
import { peekPostgres } from "./postgres-peek.ts";
import { isPostgresUrl } from "./redact-url.ts";

/**
 * Whether two --state locations name one state however they are written: `state copy
 * --replace` from a state into itself would drop its webhook outbox and number its audit
 * log anew, and must be refused whatever the spelling.
 *
 * - Two SQLite paths: the same file, by device and inode (a symbolic link to it, a hard
 *   link, `./` or `..` in the path). A path with no file at it names no state yet.
 * - Two PostgreSQL URLs: the same schema of the same database of the same server, as
 *   that server tells it (its start time, the database's and the schema's oids), so
 *   `localhost` and `127.0.0.1`, another user, or the same search_path written otherwise
 *   are told. One that cannot be reached or read is taken to be another state: opening
 *   it says what is wrong.
 *
 * The store id of the generation row does not tell it: a backup (`iplookup backup`,
 * `pg_dump`) keeps it, and restoring one over the state it was taken from is what
 * `--replace` is for.
 */
export async function sameState(a: string, b: string): Promise<boolean> {
  if (a === b) return true;
  const postgres = isPostgresUrl(a);
  if (postgres !== isPostgresUrl(b)) return false;
  if (!postgres) return sameFile(a, b);
  const [one, other] = await Promise.all([postgresPlace(a), postgresPlace(b)]);
  return one !== null && one === other;
}

function sameFile(a: string, b: string): boolean {
  try {
    const [one, other] = [statSync(a, { bigint: true }), statSync(b, { bigint: true })];
    return one.dev === other.dev && one.ino === other.ino;
  } catch {
    return false;
  }
}

/**
 * Where a URL's state lives, as the server tells it: its start time (which a standby or
 * another server on the host does not share), the database's oid and that of the schema
 * iplookup's tables are made in (the first of the search_path that exists). Null when
 * the database cannot be reached or the URL names no schema there.
 */
async function postgresPlace(url: string): Promise<string | null> {
  try {
    const [row] = await peekPostgres(
      url,
      (sql) => sql<{ started: string; database: string; schema: string | null }[]>`SELECT
        pg_postmaster_start_time()::text AS started,
        (SELECT oid FROM pg_database WHERE datname = current_database())::text AS database,
        (SELECT oid FROM pg_namespace WHERE nspname = current_schema())::text AS schema`,
    );
    return row && row.schema !== null ? `${row.started} ${row.database} ${row.schema}` : null;
  } catch {
    return null;
  }
}

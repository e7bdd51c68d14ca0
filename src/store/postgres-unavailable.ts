/**
 * Bun's codes for a connection that failed or ended: the database cannot be reached.
 */
const UNAVAILABLE_CODES = new Set([
  "ERR_POSTGRES_CONNECTION_CLOSED",
  "ERR_POSTGRES_CONNECTION_REFUSED",
  "ERR_POSTGRES_CONNECTION_FAILED",
  "ERR_POSTGRES_CONNECTION_TIMEOUT",
  "ERR_POSTGRES_IDLE_TIMEOUT",
  "ERR_POSTGRES_LIFETIME_TIMEOUT",
  "ERR_POSTGRES_TLS_UPGRADE_FAILED",
  "ERR_POSTGRES_TLS_NOT_AVAILABLE",
]);

/**
 * PostgreSQL's SQLSTATE classes, and single states, that say the database cannot serve
 * now rather than that a statement is wrong. A store that answers these answers 503
 * store_unavailable (with Retry-After, /readyz 503) instead of 500 internal_error: the
 * operator's database, not iplookup, has to change, and requests cost nothing meanwhile.
 *
 * - 08: the connection failed or was lost.
 * - 28: the server refused the login (a password changed on the database but not in
 *   this host's URL, pg_hba.conf).
 * - 53: too many connections, disk full, out of memory.
 * - 57: operator intervention: the server shutting down or starting (57P01–57P03), the
 *   database dropped (57P04), a statement cancelled or timed out (57014).
 * - 58: the server's own I/O errors.
 * - 3D000: the database named in the URL does not exist.
 * - 25006: a read-only transaction: a standby after a failover, or
 *   default_transaction_read_only set.
 * - 55000: the database does not accept connections now (ALLOW_CONNECTIONS false, as an
 *   operator sets it for maintenance); 55P03: a lock not available in time.
 * - 42501 (insufficient_privilege): iplookup's role lost a privilege it had when the
 *   server started: a table's (REVOKE UPDATE ON usage), or CONNECT on the database.
 * - 42P01 (undefined_table), 42703 (undefined_column): the schema iplookup created and
 *   migrated at start is gone or changed under it (the database dropped and created
 *   again empty, a table or column dropped, a restore of an older backup). Its
 *   statements name only those tables and columns, and a request's values are always
 *   parameters, never part of a statement's text: no request can cause these.
 * - 25P03 (idle_in_transaction_session_timeout): the server ended a session whose
 *   transaction sat idle past the pool's limit (PostgresStore.open sets it); the
 *   transaction was rolled back and the connection is gone, as with 57P01.
 * - 42P10 (invalid_column_reference): an ON CONFLICT whose table has lost the unique
 *   key it names. iplookup's ON CONFLICT clauses name only the keys its schema creates,
 *   so the schema is what changed: `pg_restore --clean` creates each table, fills it,
 *   and adds its primary and unique keys only at the end.
 *
 * And one constraint violation: 23502 (not_null_violation) in a column whose value the
 * database itself gives, never iplookup (IDENTITY_COLUMNS): `pg_restore` creates such a
 * column NOT NULL and makes it an identity in a later step, between which every insert
 * is refused.
 *
 * A request's own bad values (class 22, data exceptions; 23, any other constraint
 * violation) and a statement iplookup got wrong (42601, syntax) stay what they are: 400
 * where the request is checked first, else 500, a bug.
 */
const UNAVAILABLE_CLASSES = ["08", "28", "53", "57", "58"];
const UNAVAILABLE_STATES = new Set(["3D000", "25006", "25P03", "55000", "55P03", "42501", "42P01", "42703", "42P10"]);

/** The identity columns of the schema (postgres-schema.ts), by table: filled by the database on every insert. */
const IDENTITY_COLUMNS: Readonly<Record<string, string>> = {
  keys: "seq",
  admin_tokens: "seq",
  webhooks: "seq",
  audit_log: "seq",
  webhook_deliveries: "id",
};

/** Whether a PostgreSQL error is a null refused in an identity column (see IDENTITY_COLUMNS): the column has lost its identity. */
function isIdentityLost(error: unknown): boolean {
  if (sqlstateOf(error) !== "23502") return false;
  const { table, column } = error as { table?: unknown; column?: unknown };
  return typeof table === "string" && Object.hasOwn(IDENTITY_COLUMNS, table) && IDENTITY_COLUMNS[table] === column;
}

/** A PostgreSQL error's SQLSTATE (Bun's SQL client gives it as `errno`), or undefined for any other error. */
export function sqlstateOf(error: unknown): string | undefined {
  const errno = (error as { errno?: unknown } | null | undefined)?.errno;
  return typeof errno === "string" ? errno : undefined;
}

/**
 * Whether a PostgreSQL error is a write refused by a read-only session (25006): a
 * standby, a primary demoted by a failover, or default_transaction_read_only set. A
 * session stays so for as long as it lives, so the pool's connections are made again.
 */
export function isReadOnly(error: unknown): boolean {
  return sqlstateOf(error) === "25006";
}

/** The refusals among UNAVAILABLE_STATES: the database serves, but not this statement of iplookup's. */
const REFUSED_STATES = new Set(["42501", "42P01", "42703", "42P10"]);

/** Whether a PostgreSQL error is a statement refused while the database otherwise serves (a privilege, a table, column or key gone). */
export function isRefusal(error: unknown): boolean {
  const sqlstate = sqlstateOf(error);
  return (sqlstate !== undefined && REFUSED_STATES.has(sqlstate)) || isIdentityLost(error);
}

/** Whether a PostgreSQL error means the database cannot be reached or cannot serve now. */
export function isUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  if (typeof code === "string" && UNAVAILABLE_CODES.has(code)) return true;
  const sqlstate = sqlstateOf(error);
  if (sqlstate === undefined) return false;
  return UNAVAILABLE_CLASSES.includes(sqlstate.slice(0, 2)) || UNAVAILABLE_STATES.has(sqlstate) || isIdentityLost(error);
}

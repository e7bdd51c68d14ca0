import { expect, test } from "bun:test";
import { isRefusal, isUnavailable } from "../../src/store/postgres-unavailable.ts";

/** An error as Bun's PostgreSQL client makes one: its code, and the server's SQLSTATE as errno. */
const serverError = (errno: string) => Object.assign(new Error(errno), { code: "ERR_POSTGRES_SERVER_ERROR", errno });

test.each([
  ["08006", "connection failure"],
  ["28P01", "password authentication failed"],
  ["28000", "role does not exist"],
  ["53300", "too many connections"],
  ["53100", "disk full"],
  ["57P01", "terminated by an administrator"],
  ["57P03", "cannot connect now (starting up)"],
  ["57P04", "database dropped"],
  ["57014", "statement timeout"],
  ["58030", "I/O error"],
  ["3D000", "database does not exist"],
  ["25006", "read-only transaction (a standby after failover)"],
  ["25P03", "session ended for a transaction left idle (the pool's idle_in_transaction_session_timeout)"],
  ["55000", "database not accepting connections"],
  ["55P03", "lock not available"],
  ["42501", "insufficient privilege (a REVOKE, CONNECT on the database lost)"],
  ["42P01", "undefined table (the database dropped and created again empty)"],
  ["42703", "undefined column (the schema changed under the server)"],
  ["42P10", "no unique key for ON CONFLICT (a restore that has not added the keys back yet)"],
])("SQLSTATE %s (%s): the database cannot serve now", (errno) => {
  expect(isUnavailable(serverError(errno))).toBe(true);
});

test.each([
  ["23505", "unique violation"],
  ["23503", "foreign key violation"],
  ["42601", "syntax error"],
  ["42883", "undefined function"],
  ["22003", "numeric value out of range"],
  ["22P02", "invalid text representation"],
  ["40001", "serialization failure"],
  ["XX000", "internal error"],
])("SQLSTATE %s (%s): the statement, not the database, is at fault", (errno) => {
  expect(isUnavailable(serverError(errno))).toBe(false);
});

test("a null refused in an identity column (a restore that has not made it an identity again) counts; in any other column it does not", () => {
  const notNull = (table: string, column: string) => Object.assign(serverError("23502"), { table, column });
  for (const [table, column] of [["keys", "seq"], ["admin_tokens", "seq"], ["webhooks", "seq"], ["audit_log", "seq"], ["webhook_deliveries", "id"]] as const) {
    expect({ table, column, unavailable: isUnavailable(notNull(table, column)), refused: isRefusal(notNull(table, column)) }).toEqual({ table, column, unavailable: true, refused: true });
  }
  for (const [table, column] of [["keys", "name"], ["keys", "id"], ["usage", "used"], ["webhook_attempts", "delivery_id"], ["other", "seq"]] as const) {
    expect({ table, column, unavailable: isUnavailable(notNull(table, column)) }).toEqual({ table, column, unavailable: false });
  }
  expect(isUnavailable(serverError("23502"))).toBe(false);
});

test("Bun's connection codes count; other errors and non-errors do not", () => {
  for (const code of ["ERR_POSTGRES_CONNECTION_CLOSED", "ERR_POSTGRES_CONNECTION_REFUSED", "ERR_POSTGRES_CONNECTION_TIMEOUT", "ERR_POSTGRES_TLS_NOT_AVAILABLE"]) {
    expect(isUnavailable(Object.assign(new Error(code), { code }))).toBe(true);
  }
  expect(isUnavailable(Object.assign(new Error("x"), { code: "ERR_POSTGRES_SYNTAX_ERROR" }))).toBe(false);
  expect(isUnavailable(new Error("plain"))).toBe(false);
  expect(isUnavailable(undefined)).toBe(false);
  expect(isUnavailable(null)).toBe(false);
  expect(isUnavailable("08006")).toBe(false);
});

import { afterAll } from "bun:test";
import { SQL } from "bun";
import { postgresReachable } from "./postgres-reachable.ts";

/**
 * PostgreSQL for the tests: the server on 127.0.0.1:5432 (user postgres, database `test`
 * for administration), or IPLOOKUP_TEST_POSTGRES. When it cannot be reached, the tests
 * that need it say so and are skipped (`describe.skipIf(!postgresAvailable)`).
 */
export const POSTGRES_ADMIN_URL = process.env.IPLOOKUP_TEST_POSTGRES || "postgres://postgres@127.0.0.1:5432/test";

export const postgresAvailable = await postgresReachable(POSTGRES_ADMIN_URL);
if (!postgresAvailable) console.warn(`PostgreSQL is not reachable at ${new URL(POSTGRES_ADMIN_URL).host}: skipping the tests that need it`);

/**
 * The URL of a database on the test server, with an optional password (trust
 * authentication ignores it) and an optional schema (the connections' search_path).
 */
export function databaseUrl(name: string, options: { password?: string; schema?: string } = {}): string {
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  url.search = "";
  if (options.password !== undefined) url.password = options.password;
  if (options.schema !== undefined) url.searchParams.set("options", `-c search_path=${options.schema}`);
  return url.href;
}

/** A connection of the test's own to a database, beside the stores, for raw SQL; closed once `work` is done. */
export async function raw<T>(url: string, work: (sql: SQL) => Promise<T>): Promise<T> {
  const sql = new SQL(url, { max: 1 });
  try {
    return await work(sql);
  } finally {
    await sql.close();
  }
}

/** The test states of one test file (see testStates). */
export interface TestStates {
  /** A URL of a new, empty state. */
  fresh(): Promise<string>;
  /** A new, empty database of this file's, for the tests that need a whole database; dropped with the rest. */
  freshDatabase(): Promise<string>;
}

/**
 * PostgreSQL states for the calling test file, in a database of its own,
 * `iplookup_test_<random>`, created on first use and dropped after the file's tests
 * (connections still open to it are ended: WITH (FORCE)). Each fresh() is an empty
 * schema of that database, named in the URL's search_path (`?options=-c search_path=…`,
 * as an operator may keep iplookup's tables in a schema of their own): a schema costs a
 * millisecond, a database about a hundred.
 */
export function testStates(): TestStates {
  const name = `iplookup_test_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
  const databases: string[] = [];
  let admin: SQL | undefined;
  let main: SQL | undefined;
  let schemas = 0;
  const createDatabase = async (database: string) => {
    admin ??= new SQL(POSTGRES_ADMIN_URL, { max: 1 });
    databases.push(database);
    await admin.unsafe(`CREATE DATABASE ${database}`);
  };
  afterAll(async () => {
    await main?.close();
    if (!admin) return;
    for (const database of databases) await admin.unsafe(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.close();
  }, 30_000);
  return {
    async fresh() {
      if (!main) {
        await createDatabase(name);
        main = new SQL(databaseUrl(name), { max: 1 });
      }
      const schema = `s${++schemas}`;
      await main.unsafe(`CREATE SCHEMA ${schema}`);
      return databaseUrl(name, { schema });
    },
    async freshDatabase() {
      const database = `${name}_${databases.length + 1}`;
      await createDatabase(database);
      return databaseUrl(database);
    },
  };
}

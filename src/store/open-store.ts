import { PostgresStore, type PostgresStoreOptions } from "./postgres-store.ts";
import { isPostgresUrl } from "./redact-url.ts";
import { SqliteStore, type SqliteStoreOptions } from "./sqlite-store.ts";
import type { Store } from "./store.ts";

export { isPostgresUrl, redactUrl } from "./redact-url.ts";

/**
 * Options of openStore: each store reads its own and ignores the other's (`clock`,
 * `create` and `readOnly` mean the same to both).
 */
export type OpenStoreOptions = SqliteStoreOptions & PostgresStoreOptions;

/**
 * Opens the store a --state location names: a `postgres://` or `postgresql://` URL opens
 * the PostgreSQL database (PostgresStore), anything else the SQLite file at that path
 * (SqliteStore, `:memory:` included). Messages name a URL without its password.
 */
export async function openStore(location: string, options: OpenStoreOptions = {}): Promise<Store> {
  if (isPostgresUrl(location)) return PostgresStore.open(location, options);
  return SqliteStore.open(location, options);
}

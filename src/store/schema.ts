import type { Database } from "bun:sqlite";
import { StoreError } from "./store.ts";

/**
 * The state file's schema, as migrations applied in order; `PRAGMA user_version` is the
 * number applied. All of a run's migrations go in one transaction.
 *
 * `generation` is one row that triggers bump on every change to keys or plans, from any
 * connection or process: a server polls it to know when to reload its key cache.
 */
const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE plans (
    name TEXT PRIMARY KEY,
    max_batch_size INTEGER NOT NULL CHECK (max_batch_size >= 1),
    monthly_units INTEGER CHECK (monthly_units IS NULL OR monthly_units >= 1),
    rate_limit INTEGER CHECK (rate_limit IS NULL OR rate_limit >= 1)
  ) STRICT;
  CREATE TABLE keys (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    plan TEXT NOT NULL REFERENCES plans(name),
    secret_hash TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL,
    revoked_at TEXT,
    rotated_at TEXT
  ) STRICT;
  CREATE TABLE usage (
    key_id TEXT NOT NULL REFERENCES keys(id),
    period TEXT NOT NULL,
    used INTEGER NOT NULL CHECK (used >= 0),
    PRIMARY KEY (key_id, period)
  ) STRICT, WITHOUT ROWID;
  CREATE TABLE generation (id INTEGER PRIMARY KEY CHECK (id = 1), value INTEGER NOT NULL) STRICT;
  INSERT INTO generation (id, value) VALUES (1, 0);
  CREATE TRIGGER plans_insert AFTER INSERT ON plans BEGIN UPDATE generation SET value = value + 1; END;
  CREATE TRIGGER plans_update AFTER UPDATE ON plans BEGIN UPDATE generation SET value = value + 1; END;
  CREATE TRIGGER plans_delete AFTER DELETE ON plans BEGIN UPDATE generation SET value = value + 1; END;
  CREATE TRIGGER keys_insert AFTER INSERT ON keys BEGIN UPDATE generation SET value = value + 1; END;
  CREATE TRIGGER keys_update AFTER UPDATE ON keys BEGIN UPDATE generation SET value = value + 1; END;
  CREATE TRIGGER keys_delete AFTER DELETE ON keys BEGIN UPDATE generation SET value = value + 1; END;
  INSERT INTO plans VALUES ('free', 100, 100000, 10), ('standard', 1000, 10000000, 100), ('unlimited', 10000, NULL, NULL);
  `,
  // 2: use per key per UTC day (written with the units: see SqliteStore.applyGroup), and
  // admin tokens. Neither has triggers: charges and admin tokens do not concern the
  // servers' key caches, so they leave the change counter alone.
  `
  CREATE TABLE usage_days (
    key_id TEXT NOT NULL REFERENCES keys(id),
    day TEXT NOT NULL,
    requests INTEGER NOT NULL CHECK (requests >= 0),
    units INTEGER NOT NULL CHECK (units >= 0),
    last_used_at TEXT NOT NULL,
    PRIMARY KEY (key_id, day)
  ) STRICT, WITHOUT ROWID;
  CREATE INDEX usage_days_by_day ON usage_days (day, key_id);
  CREATE TABLE admin_tokens (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    secret_hash TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL,
    revoked_at TEXT
  ) STRICT;
  `,
];

/** The schema version this code writes. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * Brings the schema of an open state file up to date, in one IMMEDIATE transaction, so
 * processes opening the same new file at once migrate it once. An up-to-date file is
 * only read. Refuses a SQLite file that holds other tables (the data file given as
 * `--state`, say) and a file from a newer iplookup.
 */
export function migrate(db: Database, path: string): void {
  if (schemaVersion(db, path) === SCHEMA_VERSION) return;
  db.transaction(() => {
    for (let version = schemaVersion(db, path); version < SCHEMA_VERSION; version++) {
      db.run(MIGRATIONS[version] as string);
    }
    db.run(`PRAGMA user_version = ${SCHEMA_VERSION}`);
  }).immediate();
}

/**
 * The schema version of an open file, read without writing. Throws StoreError for a
 * SQLite file that holds other tables and for a file from a newer iplookup.
 */
export function schemaVersion(db: Database, path: string): number {
  const version = db.query<{ user_version: number }, []>("PRAGMA user_version").get()!.user_version;
  if (version === 0 && db.query("SELECT 1 FROM sqlite_schema LIMIT 1").get() !== null) {
    throw new StoreError(`${path} is a SQLite file but not an iplookup state file`);
  }
  if (version > SCHEMA_VERSION) {
    throw new StoreError(`${path} has schema version ${version}, newer than this iplookup knows (${SCHEMA_VERSION}); use a newer iplookup`);
  }
  return version;
}

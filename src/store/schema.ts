import type { Database } from "bun:sqlite";
import { StoreError } from "./store.ts";

/**
 * The state file's schema, as migrations applied in order; `PRAGMA user_version` is the
 * number applied. All of a run's migrations go in one transaction.
 *
 * `generation` is one row that triggers bump on every change to keys or plans, from any
 * connection or process, with the store's id (migration 6): a server polls it to know
 * when to reload its key cache.
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
  // 3: local corrections (CONTRACT §15): one row per block, its canonical CIDR text, the
  // fields it corrects as a JSON object (see src/store/correction-rows.ts). Its triggers
  // move the change counter, so running servers reload the corrections within a second,
  // as they reload keys.
  `
  CREATE TABLE corrections (
    cidr TEXT PRIMARY KEY,
    fields TEXT NOT NULL,
    note TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  ) STRICT;
  CREATE TRIGGER corrections_insert AFTER INSERT ON corrections BEGIN UPDATE generation SET value = value + 1; END;
  CREATE TRIGGER corrections_update AFTER UPDATE ON corrections BEGIN UPDATE generation SET value = value + 1; END;
  CREATE TRIGGER corrections_delete AFTER DELETE ON corrections BEGIN UPDATE generation SET value = value + 1; END;
  `,
  // 4: key controls, rotation with a grace period, read-only admin tokens and the audit
  // log (CONTRACT §16). The controls are JSON text written canonically by iplookup
  // (null: no such control); the previous secret's hash works until grace_until. The
  // keys_update trigger bumps the change counter for these columns too, so every
  // server's key cache sees a change within a second. The audit log has no trigger.
  `
  ALTER TABLE keys ADD COLUMN expires_at TEXT;
  ALTER TABLE keys ADD COLUMN allowed_cidrs TEXT;
  ALTER TABLE keys ADD COLUMN allowed_origins TEXT;
  ALTER TABLE keys ADD COLUMN metadata TEXT;
  ALTER TABLE keys ADD COLUMN previous_secret_hash TEXT;
  ALTER TABLE keys ADD COLUMN grace_until TEXT;
  CREATE UNIQUE INDEX keys_previous_secret_hash ON keys (previous_secret_hash) WHERE previous_secret_hash IS NOT NULL;
  ALTER TABLE admin_tokens ADD COLUMN read_only INTEGER NOT NULL DEFAULT 0 CHECK (read_only IN (0, 1));
  CREATE TABLE audit_log (
    seq INTEGER PRIMARY KEY,
    at TEXT NOT NULL,
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    target TEXT NOT NULL,
    changes TEXT NOT NULL
  ) STRICT;
  CREATE INDEX audit_log_by_time ON audit_log (at, seq);
  `,
  // 5: webhooks and the event outbox (CONTRACT §16; see sqlite-webhooks.ts). An event is
  // written in the transaction that caused it; `once_key` is unique, so an event that
  // must happen once (a key crossing 80% of its units in a period) is recorded once
  // however many processes try. Each delivery is one event to one webhook, claimed with
  // a lease (`lease_until`, ms since the epoch) while it is being sent. Times that the
  // deliverer compares are ms since the epoch; shown times are ISO 8601 text. No
  // triggers: webhooks do not concern the servers' key caches.
  `
  CREATE TABLE webhooks (
    id TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    events TEXT NOT NULL,
    secret TEXT NOT NULL,
    created_at TEXT NOT NULL
  ) STRICT;
  CREATE TABLE webhook_events (
    id TEXT PRIMARY KEY,
    type TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at TEXT NOT NULL,
    once_key TEXT UNIQUE
  ) STRICT;
  CREATE TABLE webhook_deliveries (
    id INTEGER PRIMARY KEY,
    event_id TEXT NOT NULL REFERENCES webhook_events (id),
    webhook_id TEXT NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    state TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL,
    lease_until INTEGER,
    UNIQUE (event_id, webhook_id)
  ) STRICT;
  CREATE INDEX webhook_deliveries_due ON webhook_deliveries (state, next_attempt_at);
  CREATE INDEX webhook_deliveries_by_webhook ON webhook_deliveries (webhook_id, id);
  CREATE TABLE webhook_attempts (
    delivery_id INTEGER NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    attempt INTEGER NOT NULL,
    at TEXT NOT NULL,
    status INTEGER,
    duration_ms INTEGER NOT NULL,
    response TEXT,
    error TEXT,
    PRIMARY KEY (delivery_id, attempt)
  ) STRICT, WITHOUT ROWID;
  `,
  // 6: the store's id, made at random with the schema: a server compares it with the
  // counter (see Generation in store.ts), so a state restored over the file from another
  // one (sqlite3's .restore), whose counter reads what the server loaded before, is
  // still reloaded. SQLite adds a column only with a constant default: the id is written
  // after. A server of version 5 still running reads and moves the counter alone.
  `
  ALTER TABLE generation ADD COLUMN store_id TEXT NOT NULL DEFAULT '';
  UPDATE generation SET store_id = lower(hex(randomblob(16)));
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
  // One statement, so one snapshot: read apart, another process's migration committed
  // between the two would show its tables under version 0.
  const { version, tables } = db
    .query<{ version: number; tables: number }, []>("SELECT (SELECT user_version FROM pragma_user_version) AS version, EXISTS (SELECT 1 FROM sqlite_schema) AS tables")
    .get()!;
  if (version === 0 && tables !== 0) {
    throw new StoreError(`${path} is a SQLite file but not an iplookup state file`);
  }
  if (version > SCHEMA_VERSION) {
    throw new StoreError(`${path} has schema version ${version}, newer than this iplookup knows (${SCHEMA_VERSION}); use a newer iplookup`);
  }
  return version;
}

import type { SQL } from "bun";
import { OlderSchemaError, StateNotFoundError, StoreError } from "./store.ts";

/**
 * The PostgreSQL schema, as migrations applied in order; `iplookup_schema.version` is the
 * number applied. A run's migrations go in one transaction (PostgreSQL's DDL is
 * transactional): a failure leaves the database as it was.
 *
 * The tables mirror the SQLite state file's (src/store/schema.ts): `plans`, `keys`,
 * `usage`, and `generation`, one row that triggers bump on every change to keys or plans,
 * from any connection or host, with the store's id (migration 7). They are
 * statement-level triggers that count a statement only when it changed a row (their
 * transition table is not empty), so an UPDATE that matches nothing, like revoking a
 * revoked key, moves nothing, as with SQLite's row triggers, and a copy of many keys
 * moves it once rather than once a row. Each bump also sends `NOTIFY iplookup_changes`
 * with the new value, for servers that LISTEN rather than poll.
 *
 * `keys.seq` is the order of insertion, which breaks ties between keys created in the
 * same millisecond (SQLite's rowid). Times are timestamptz; periods `YYYY-MM` text.
 */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE plans (
    name text PRIMARY KEY,
    max_batch_size integer NOT NULL CHECK (max_batch_size >= 1),
    monthly_units bigint CHECK (monthly_units IS NULL OR monthly_units >= 1),
    rate_limit integer CHECK (rate_limit IS NULL OR rate_limit >= 1)
  );
  CREATE TABLE keys (
    id text PRIMARY KEY,
    seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    name text NOT NULL,
    plan text NOT NULL REFERENCES plans (name),
    secret_hash text NOT NULL UNIQUE,
    created_at timestamptz NOT NULL,
    revoked_at timestamptz,
    rotated_at timestamptz
  );
  CREATE TABLE usage (
    key_id text NOT NULL REFERENCES keys (id),
    period text NOT NULL CHECK (period ~ '^[0-9]{4}-(0[1-9]|1[0-2])$'),
    used bigint NOT NULL CHECK (used >= 0),
    PRIMARY KEY (key_id, period)
  );
  CREATE TABLE generation (id integer PRIMARY KEY CHECK (id = 1), value bigint NOT NULL);
  INSERT INTO generation (id, value) VALUES (1, 0);

  CREATE FUNCTION iplookup_bump_generation() RETURNS trigger LANGUAGE plpgsql AS $$
  DECLARE
    bumped bigint;
  BEGIN
    UPDATE generation SET value = value + 1 WHERE id = 1 RETURNING value INTO bumped;
    PERFORM pg_notify('iplookup_changes', bumped::text);
    RETURN NULL;
  END $$;
  CREATE FUNCTION iplookup_bump_generation_if_changed() RETURNS trigger LANGUAGE plpgsql AS $$
  DECLARE
    bumped bigint;
  BEGIN
    IF EXISTS (SELECT 1 FROM changed) THEN
      UPDATE generation SET value = value + 1 WHERE id = 1 RETURNING value INTO bumped;
      PERFORM pg_notify('iplookup_changes', bumped::text);
    END IF;
    RETURN NULL;
  END $$;
  CREATE TRIGGER plans_insert AFTER INSERT ON plans REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION iplookup_bump_generation_if_changed();
  CREATE TRIGGER plans_update AFTER UPDATE ON plans REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION iplookup_bump_generation_if_changed();
  CREATE TRIGGER plans_delete AFTER DELETE ON plans REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION iplookup_bump_generation_if_changed();
  CREATE TRIGGER plans_truncate AFTER TRUNCATE ON plans FOR EACH STATEMENT EXECUTE FUNCTION iplookup_bump_generation();
  CREATE TRIGGER keys_insert AFTER INSERT ON keys REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION iplookup_bump_generation_if_changed();
  CREATE TRIGGER keys_update AFTER UPDATE ON keys REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION iplookup_bump_generation_if_changed();
  CREATE TRIGGER keys_delete AFTER DELETE ON keys REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION iplookup_bump_generation_if_changed();
  CREATE TRIGGER keys_truncate AFTER TRUNCATE ON keys FOR EACH STATEMENT EXECUTE FUNCTION iplookup_bump_generation();

  INSERT INTO plans VALUES ('free', 100, 100000, 10), ('standard', 1000, 10000000, 100), ('unlimited', 10000, NULL, NULL);
  `,
  // 2: use per key per UTC day (written in the charge's transaction: see
  // PostgresStore.applyGroup), and admin tokens. Neither has triggers: charges and admin
  // tokens do not concern the servers' key caches, so they leave the change counter alone.
  `
  CREATE TABLE usage_days (
    key_id text NOT NULL REFERENCES keys (id),
    day date NOT NULL,
    requests bigint NOT NULL CHECK (requests >= 0),
    units bigint NOT NULL CHECK (units >= 0),
    last_used_at timestamptz NOT NULL,
    PRIMARY KEY (key_id, day)
  );
  CREATE INDEX usage_days_by_day ON usage_days (day, key_id);
  CREATE TABLE admin_tokens (
    id text PRIMARY KEY,
    seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    name text NOT NULL,
    secret_hash text NOT NULL UNIQUE,
    created_at timestamptz NOT NULL,
    revoked_at timestamptz
  );
  `,
  // 3: the rate-limit token bucket of each key, shared by every server (see
  // PostgresStore.leaseTokens): `tokens` at `updated_at` (the database's clock), and what
  // the last lease took. UNLOGGED: it is the state of the last second or so, not worth a
  // WAL flush on every lease; a database that crashes starts every bucket full again
  // (one burst), and a standby does not carry it. No foreign key and no trigger: a
  // bucket says nothing about keys, and a lease must not move the change counter.
  `
  CREATE UNLOGGED TABLE rate_buckets (
    key_id text PRIMARY KEY,
    tokens double precision NOT NULL,
    granted integer NOT NULL,
    updated_at timestamptz NOT NULL
  );
  `,
  // 4: local corrections (CONTRACT §15), as in the SQLite state file (schema.ts,
  // migration 3). Its triggers move the change counter and announce it, as keys' do.
  `
  CREATE TABLE corrections (
    cidr text PRIMARY KEY,
    fields text NOT NULL,
    note text,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  );
  CREATE TRIGGER corrections_insert AFTER INSERT ON corrections REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION iplookup_bump_generation_if_changed();
  CREATE TRIGGER corrections_update AFTER UPDATE ON corrections REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION iplookup_bump_generation_if_changed();
  CREATE TRIGGER corrections_delete AFTER DELETE ON corrections REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION iplookup_bump_generation_if_changed();
  CREATE TRIGGER corrections_truncate AFTER TRUNCATE ON corrections FOR EACH STATEMENT EXECUTE FUNCTION iplookup_bump_generation();
  `,
  // 5: key controls, rotation with a grace period, read-only admin tokens and the audit
  // log (CONTRACT §16), as in the SQLite file's migration 4: the controls are JSON text
  // written canonically by iplookup (text, not jsonb, so that they read back byte for
  // byte); keys_update moves the change counter for them too. The audit log has no trigger.
  `
  ALTER TABLE keys ADD COLUMN expires_at timestamptz;
  ALTER TABLE keys ADD COLUMN allowed_cidrs text;
  ALTER TABLE keys ADD COLUMN allowed_origins text;
  ALTER TABLE keys ADD COLUMN metadata text;
  ALTER TABLE keys ADD COLUMN previous_secret_hash text UNIQUE;
  ALTER TABLE keys ADD COLUMN grace_until timestamptz;
  ALTER TABLE admin_tokens ADD COLUMN read_only boolean NOT NULL DEFAULT false;
  CREATE TABLE audit_log (
    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at timestamptz NOT NULL,
    actor text NOT NULL,
    action text NOT NULL,
    target text NOT NULL,
    changes text NOT NULL
  );
  CREATE INDEX audit_log_by_time ON audit_log (at, seq);
  `,
  // 6: webhooks and the event outbox (CONTRACT §16), as the SQLite file's migration 5
  // (see postgres-webhooks.ts): `once_key` is unique, so an event that must happen once
  // is recorded once by the whole fleet; a delivery is claimed with FOR UPDATE SKIP
  // LOCKED and a lease (`lease_until`, ms since the epoch), so one server sends it at a
  // time, and another takes it over only once a lease has run out (a server that died).
  `
  CREATE TABLE webhooks (
    id text PRIMARY KEY,
    seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    url text NOT NULL,
    events text NOT NULL,
    secret text NOT NULL,
    created_at timestamptz NOT NULL
  );
  CREATE TABLE webhook_events (
    id text PRIMARY KEY,
    type text NOT NULL,
    body text NOT NULL,
    created_at timestamptz NOT NULL,
    once_key text UNIQUE
  );
  CREATE TABLE webhook_deliveries (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id text NOT NULL REFERENCES webhook_events (id),
    webhook_id text NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    state text NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
    attempts integer NOT NULL DEFAULT 0,
    next_attempt_at bigint NOT NULL,
    lease_until bigint,
    UNIQUE (event_id, webhook_id)
  );
  CREATE INDEX webhook_deliveries_due ON webhook_deliveries (state, next_attempt_at);
  CREATE INDEX webhook_deliveries_by_webhook ON webhook_deliveries (webhook_id, id);
  CREATE TABLE webhook_attempts (
    delivery_id bigint NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    attempt integer NOT NULL,
    at timestamptz NOT NULL,
    status integer,
    duration_ms integer NOT NULL,
    response text,
    error text,
    PRIMARY KEY (delivery_id, attempt)
  );
  `,
  // 7: the store's id, made at random with the schema (and with a generation row made
  // again): a server compares it with the counter (see Generation in store.ts), so a
  // database dropped and made again, or a schema restored from another database, whose
  // counter reads what the server loaded before, is still reloaded. A server of version
  // 6 still running reads and moves the counter alone, as before. A uuid made of the md5 of
  // random text: gen_random_uuid() is PostgreSQL's only from 13 (docs/postgresql.md says 11).
  `
  ALTER TABLE generation ADD COLUMN store_id text NOT NULL DEFAULT md5(random()::text || clock_timestamp()::text)::uuid::text;
  `,
];

/** The schema version this code writes. */
export const POSTGRES_SCHEMA_VERSION = MIGRATIONS.length;

/** The channel every change to keys or plans is announced on (payload: the new generation). */
export const CHANGES_CHANNEL = "iplookup_changes";

/**
 * The key of the transaction-level advisory lock held while migrating ("iplk"): every
 * iplookup opening the same database takes it, so two that start at once on an empty
 * database migrate it once, one after the other, instead of both creating the tables.
 */
const MIGRATION_LOCK = 0x69706c6b;

/** The tables of migration 1: a database that holds one of them but no iplookup_schema is someone else's. */
const OWN_TABLES = ["plans", "keys", "usage", "generation"];

/**
 * Brings the schema of the database up to date. An up-to-date database is only read (no
 * lock). Otherwise the migrations run in one transaction under MIGRATION_LOCK, and the
 * version is read again once the lock is held, since another process may have migrated
 * meanwhile. Refuses, changing nothing, a database from a newer iplookup and one whose
 * tables are not iplookup's. With `create` false, a database without the schema is
 * refused with StateNotFoundError and nothing is created.
 *
 * `label` names the database in messages: a URL without its password.
 */
export async function migratePostgres(sql: SQL, label: string, create = true): Promise<void> {
  const found = await schemaVersion(sql, label);
  if (found === POSTGRES_SCHEMA_VERSION) return;
  if (found === null && !create) throw new StateNotFoundError(`${label} holds no iplookup state (no iplookup_schema table)`);
  await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`;
    let version = await schemaVersion(tx, label);
    if (version === null) {
      if ((await tablesPresent(tx, OWN_TABLES)).length > 0) throw new StoreError(`${label} holds tables named ${OWN_TABLES.join(", ")} (some of them) but is not an iplookup database; use a database of its own`);
      await tx`CREATE TABLE iplookup_schema (id integer PRIMARY KEY CHECK (id = 1), version integer NOT NULL)`;
      await tx`INSERT INTO iplookup_schema (id, version) VALUES (1, 0)`;
      version = 0;
    }
    for (; version < POSTGRES_SCHEMA_VERSION; version++) await tx.unsafe(MIGRATIONS[version] as string);
    await tx`UPDATE iplookup_schema SET version = ${POSTGRES_SCHEMA_VERSION} WHERE id = 1`;
  });
}

/**
 * For a command that only reads (PostgresStoreOptions.readOnly): checks, changing
 * nothing, that the database holds this version's schema. A database without one is
 * refused with StateNotFoundError, one of a newer iplookup with StoreError, and one of an
 * older schema with OlderSchemaError: migrating it would lock every server of the older
 * version out at its next start, which only a server of this version, or a command that
 * changes the state, may do.
 */
export async function checkPostgresSchema(sql: SQL, label: string): Promise<void> {
  const found = await schemaVersion(sql, label);
  if (found === null) throw new StateNotFoundError(`${label} holds no iplookup state (no iplookup_schema table)`);
  if (found < POSTGRES_SCHEMA_VERSION) {
    throw new OlderSchemaError(
      `${label} has schema version ${found}, older than this iplookup's (${POSTGRES_SCHEMA_VERSION}); a command that only reads does not upgrade it. A server of this version, or any command that changes the state (keys create, plans set, …), upgrades it, after which servers of older versions are refused at start`,
    );
  }
}

/**
 * The schema version of the database: null when it has no iplookup_schema table. Throws
 * StoreError for a database from a newer iplookup.
 */
export async function schemaVersion(sql: SQL, label: string): Promise<number | null> {
  if ((await tablesPresent(sql, ["iplookup_schema"])).length === 0) return null;
  const [row] = await sql`SELECT version FROM iplookup_schema WHERE id = 1`;
  const version = row ? Number(row.version) : 0;
  if (version > POSTGRES_SCHEMA_VERSION) {
    throw new StoreError(`${label} has schema version ${version}, newer than this iplookup knows (${POSTGRES_SCHEMA_VERSION}); use a newer iplookup`);
  }
  return version;
}

/**
 * How many keys and corrections the database's iplookup state holds, read as its schema
 * is, without migrating it: none when it has no iplookup_schema table; no corrections
 * before the schema version that added them. Throws StoreError for a database from a
 * newer iplookup (see schemaVersion).
 */
export async function heldRows(sql: SQL, label: string): Promise<{ keys: number; corrections: number }> {
  if ((await schemaVersion(sql, label)) === null) return { keys: 0, corrections: 0 };
  const [keys] = await sql`SELECT count(*)::int AS n FROM keys`;
  const corrections = (await tablesPresent(sql, ["corrections"])).length > 0 ? (await sql`SELECT count(*)::int AS n FROM corrections`)[0].n : 0;
  return { keys: keys.n, corrections };
}

/**
 * Which of these tables exist in the schema that CREATE TABLE writes to (the first of the
 * search_path). Read from pg_class with the statement's snapshot, not with to_regclass:
 * that one answers from the session's catalog cache, which a connection that looked a
 * table up before another process created it may not have refreshed yet while it waited
 * for the migration lock.
 */
async function tablesPresent(sql: SQL, names: readonly string[]): Promise<string[]> {
  const rows = await sql`SELECT relname FROM pg_catalog.pg_class
    WHERE relname = ANY(${sql.array([...names], "TEXT")}) AND relkind IN ('r', 'p', 'v', 'm', 'f') AND relnamespace = current_schema()::regnamespace`;
  return rows.map((row: { relname: string }) => row.relname);
}

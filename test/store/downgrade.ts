import type { Database } from "bun:sqlite";
import type { SQL } from "bun";

/**
 * Takes a state back to an older schema version, as an older iplookup left it, by
 * undoing the later migrations newest first: what the upgrade tests start from. A
 * migration added to the stores adds its undoing here (schema.ts, postgres-schema.ts).
 */
const SQLITE_UNDO: Record<number, string[]> = {
  // 6: the store's id.
  6: ["ALTER TABLE generation DROP COLUMN store_id"],
  // 5: webhooks and the event outbox.
  5: ["DROP TABLE webhook_attempts", "DROP TABLE webhook_deliveries", "DROP TABLE webhook_events", "DROP TABLE webhooks"],
  // 4: key controls, read-only admin tokens, the audit log.
  4: [
    "DROP TABLE audit_log",
    "DROP INDEX keys_previous_secret_hash",
    "ALTER TABLE admin_tokens DROP COLUMN read_only",
    ...["expires_at", "allowed_cidrs", "allowed_origins", "metadata", "previous_secret_hash", "grace_until"].map((column) => `ALTER TABLE keys DROP COLUMN ${column}`),
  ],
  // 3: local corrections.
  3: ["DROP TABLE corrections"],
  // 2: use per day, admin tokens.
  2: ["DROP TABLE usage_days", "DROP TABLE admin_tokens"],
};

const POSTGRES_UNDO: Record<number, string[]> = {
  7: ["ALTER TABLE generation DROP COLUMN store_id"],
  6: ["DROP TABLE webhook_attempts", "DROP TABLE webhook_deliveries", "DROP TABLE webhook_events", "DROP TABLE webhooks"],
  5: [
    "DROP TABLE audit_log",
    "ALTER TABLE admin_tokens DROP COLUMN read_only",
    ...["expires_at", "allowed_cidrs", "allowed_origins", "metadata", "previous_secret_hash", "grace_until"].map((column) => `ALTER TABLE keys DROP COLUMN ${column}`),
  ],
  4: ["DROP TABLE corrections"],
};

/** Undoes the SQLite state file's migrations after `version`. */
export function downgradeSqlite(db: Database, version: number): void {
  const current = db.query<{ user_version: number }, []>("PRAGMA user_version").get()!.user_version;
  for (let applied = current; applied > version; applied--) {
    const undo = SQLITE_UNDO[applied];
    if (!undo) throw new Error(`no way to undo SQLite migration ${applied}`);
    for (const statement of undo) db.run(statement);
  }
  db.run(`PRAGMA user_version = ${version}`);
}

/** Undoes the PostgreSQL state's migrations after `version`. */
export async function downgradePostgres(sql: SQL, version: number): Promise<void> {
  const [{ version: current }] = await sql`SELECT version FROM iplookup_schema`;
  for (let applied = current as number; applied > version; applied--) {
    const undo = POSTGRES_UNDO[applied];
    if (!undo) throw new Error(`no way to undo PostgreSQL migration ${applied}`);
    for (const statement of undo) await sql.unsafe(statement);
  }
  await sql`UPDATE iplookup_schema SET version = ${version}`;
}

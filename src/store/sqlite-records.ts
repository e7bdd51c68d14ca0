import type { Database } from "bun:sqlite";
import type { ChangeRecord, NewEvent } from "./store.ts";

/**
 * Inside a change's transaction (see Audit in store.ts): writes its audit entry and its
 * events, so that they are committed with the change or not at all.
 */
export function writeChangeRecord(db: Database, record: ChangeRecord | null): void {
  if (!record) return;
  const { entry } = record;
  db.query("INSERT INTO audit_log (at, actor, action, target, changes) VALUES (?1, ?2, ?3, ?4, ?5)").run(entry.at, entry.actor, entry.action, entry.target, JSON.stringify(entry.changes));
  for (const event of record.events ?? []) insertEvent(db, event);
}

/**
 * Records an event and its deliveries (see WebhookStore.addEvent) inside a transaction
 * the caller holds: a change's, a charge's (for thresholds), or addEvent's own.
 */
export function insertEvent(db: Database, event: NewEvent): boolean {
  const inserted = db
    .query("INSERT INTO webhook_events (id, type, body, created_at, once_key) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (once_key) DO NOTHING")
    .run(event.id, event.type, event.body, event.createdAt, event.onceKey ?? null);
  if (inserted.changes === 0) return false;
  const due = Date.parse(event.createdAt);
  if (event.webhookId !== undefined) {
    db.query("INSERT INTO webhook_deliveries (event_id, webhook_id, state, next_attempt_at) SELECT ?1, id, 'pending', ?2 FROM webhooks WHERE id = ?3").run(event.id, due, event.webhookId);
  } else {
    db.query(
      `INSERT INTO webhook_deliveries (event_id, webhook_id, state, next_attempt_at)
       SELECT ?1, id, 'pending', ?2 FROM webhooks WHERE instr(',' || events || ',', ',' || ?3 || ',') > 0 ORDER BY created_at, rowid`,
    ).run(event.id, due, event.type);
  }
  return true;
}

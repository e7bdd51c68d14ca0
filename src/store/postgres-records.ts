import type { SQL } from "bun";
import type { ChangeRecord, NewEvent } from "./store.ts";

/**
 * Records an event and its deliveries in one statement; answers 1 when recorded, 0 when its
 * once_key was.
 *
 * The webhooks chosen are locked FOR KEY SHARE (as the foreign key's own check would lock
 * them, and in their seq order): under READ COMMITTED the statement's snapshot may still
 * hold a webhook that another transaction is removing, and the foreign key check then
 * waited for that removal and failed (23503, a 500 for the change whose event this was).
 * The lock waits for the removal instead, and a webhook whose removal commits meanwhile is
 * left out, so it gets no delivery; one whose removal is rolled back gets its own.
 */
const INSERT_EVENT = `WITH e AS (
    INSERT INTO webhook_events (id, type, body, created_at, once_key) VALUES ($1, $2, $3, $4::timestamptz, $5)
    ON CONFLICT (once_key) DO NOTHING RETURNING id
  ), d AS (
    INSERT INTO webhook_deliveries (event_id, webhook_id, state, next_attempt_at)
    SELECT e.id, w.id, 'pending', $6::int8 FROM e, webhooks w
    WHERE CASE WHEN $7::text IS NULL THEN strpos(',' || w.events || ',', ',' || $2 || ',') > 0 ELSE w.id = $7::text END
    ORDER BY w.seq
    FOR KEY SHARE OF w
  )
  SELECT count(*)::int AS n FROM e`;

/**
 * Inside a change's transaction (see Audit in store.ts): writes its audit entry and its
 * events, so that they are committed with the change or not at all.
 */
export async function writeChangeRecord(sql: SQL, record: ChangeRecord | null): Promise<void> {
  if (!record) return;
  const { entry } = record;
  await sql`INSERT INTO audit_log (at, actor, action, target, changes)
    VALUES (${entry.at}::timestamptz, ${entry.actor}, ${entry.action}, ${entry.target}, ${JSON.stringify(entry.changes)})`;
  for (const event of record.events ?? []) await insertEvent(sql, event);
}

/** Inserts an event and its deliveries on a connection or in a transaction. */
export async function insertEvent(sql: SQL, event: NewEvent): Promise<boolean> {
  const [row] = await sql.unsafe<{ n: number }[]>(INSERT_EVENT, [
    event.id,
    event.type,
    event.body,
    event.createdAt,
    event.onceKey ?? null,
    Date.parse(event.createdAt),
    event.webhookId ?? null,
  ]);
  return row!.n > 0;
}

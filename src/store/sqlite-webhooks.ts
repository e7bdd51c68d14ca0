import type { Database } from "bun:sqlite";
import { eventBody, newEventId } from "../events/event-types.ts";
import { crossedThresholds, thresholdData, thresholdOnceKey } from "../events/usage-thresholds.ts";
import { newWebhookSecret } from "../events/signature.ts";
import type {
  AttemptResult,
  Audit,
  ClaimOptions,
  DeliveryAttempt,
  DeliveryRecord,
  DeliveryState,
  DueDelivery,
  IssuedWebhook,
  NewEvent,
  OnceEventRecord,
  Webhook,
  WebhookRecord,
  WebhookStore,
} from "./store.ts";
import { DuplicateWebhookError, eventsColumn, eventsOf, newWebhookId, webhookOfReceiver } from "./webhook-ids.ts";
import { insertEvent, writeChangeRecord } from "./sqlite-records.ts";

interface WebhookRow {
  id: string;
  url: string;
  events: string;
  created_at: string;
}

interface AttemptRow {
  delivery_id: number;
  attempt: number;
  at: string;
  status: number | null;
  duration_ms: number;
  response: string | null;
  error: string | null;
}

/** A key's units crossing a line in a charge group: what SqliteWebhooks.recordCrossings takes. */
export interface UsageCrossing {
  readonly keyId: string;
  readonly period: string;
  readonly before: number;
  readonly after: number;
  readonly limit: number | null;
}

/**
 * The webhook tables of a SQLite state file (schema migration 3), for SqliteStore. Each
 * write is one transaction; IMMEDIATE where a read decides the write (a claim), so two
 * processes sharing the file never claim the same delivery.
 */
export class SqliteWebhooks implements WebhookStore {
  constructor(
    private readonly db: Database,
    private readonly clock: () => Date,
  ) {}

  async createWebhook(url: string, events: readonly string[], audit?: Audit<IssuedWebhook>): Promise<IssuedWebhook> {
    const webhook: Webhook = { id: newWebhookId(), url, events: [...events], createdAt: this.clock().toISOString() };
    const issued = { webhook, secret: newWebhookSecret() };
    this.db
      .transaction(() => {
        // In the IMMEDIATE transaction: two processes adding one URL at once cannot both pass.
        const existing = webhookOfReceiver(this.db.query<{ id: string; url: string }, []>("SELECT id, url FROM webhooks ORDER BY created_at, rowid").all(), url);
        if (existing !== undefined) throw new DuplicateWebhookError(existing);
        this.db.query("INSERT INTO webhooks (id, url, events, secret, created_at) VALUES (?1, ?2, ?3, ?4, ?5)").run(webhook.id, url, eventsColumn(events), issued.secret, webhook.createdAt);
        writeChangeRecord(this.db, audit?.(issued, null) ?? null);
      })
      .immediate();
    return issued;
  }

  async listWebhooks(): Promise<Webhook[]> {
    return this.db.query<WebhookRow, []>("SELECT id, url, events, created_at FROM webhooks ORDER BY created_at, rowid").all().map(toWebhook);
  }

  async getWebhook(id: string): Promise<Webhook | null> {
    const row = this.db.query<WebhookRow, [string]>("SELECT id, url, events, created_at FROM webhooks WHERE id = ?1").get(id);
    return row ? toWebhook(row) : null;
  }

  async removeWebhook(id: string, audit?: Audit<Webhook>): Promise<boolean> {
    return this.db
      .transaction(() => {
        const row = this.db.query<WebhookRow, [string]>("DELETE FROM webhooks WHERE id = ?1 RETURNING id, url, events, created_at").get(id);
        if (!row) return false;
        writeChangeRecord(this.db, audit?.(toWebhook(row), null) ?? null);
        return true;
      })
      .immediate();
  }

  async addEvent(event: NewEvent): Promise<boolean> {
    return this.db.transaction(() => this.insertEvent(event)).immediate();
  }

  /** addEvent's work, inside a transaction the caller holds (a charge's, for thresholds). */
  insertEvent(event: NewEvent): boolean {
    return insertEvent(this.db, event);
  }

  /**
   * Inside a charge group's transaction (SqliteStore.applyGroup): records a
   * usage.threshold event for each line a key's units crossed. Costs nothing unless a
   * line was crossed; the once_key makes a second record of the same crossing a no-op.
   */
  recordCrossings(crossings: readonly UsageCrossing[], nowMs: () => number): void {
    for (const crossing of crossings) {
      const lines = crossedThresholds(crossing.before, crossing.after, crossing.limit);
      if (lines.length === 0) continue;
      const key = this.db.query<{ id: string; name: string; plan: string }, [string]>("SELECT id, name, plan FROM keys WHERE id = ?1").get(crossing.keyId);
      if (!key) continue;
      const at = new Date(nowMs());
      for (const percent of lines) {
        this.insertEvent({
          id: newEventId(),
          type: "usage.threshold",
          body: eventBody("usage.threshold", thresholdData(key, crossing.period, percent, crossing.after, crossing.limit!), at),
          createdAt: at.toISOString(),
          onceKey: thresholdOnceKey(crossing.keyId, crossing.period, percent),
        });
      }
    }
  }

  async claimDeliveries({ limit, nowMs, leaseMs, eventId, perWebhook }: ClaimOptions): Promise<DueDelivery[]> {
    const inFlight = JSON.stringify(perWebhook?.inFlight ?? {});
    const share = perWebhook?.limit ?? null;
    // A server asks every second: a plain read first, so that the write lock (which the
    // charges need) is taken only when something is due.
    const due = this.db
      .query<{ found: number }, [number, string, number | null]>(
        `SELECT 1 AS found FROM webhook_deliveries WHERE state = 'pending' AND next_attempt_at <= ?1 AND (lease_until IS NULL OR lease_until <= ?1)
         AND webhook_id NOT IN (SELECT key FROM json_each(?2) WHERE value >= ?3) LIMIT 1`,
      )
      .get(nowMs, inFlight, share);
    if (!due) return [];
    return this.db
      .transaction(() => {
        // The oldest due first; of a webhook, no more than its share with those in flight.
        const rows = this.db
          .query<
            { id: number; attempts: number; webhook_id: string; url: string; secret: string; event_id: string; type: string; body: string; created_at: string },
            [number, number, string | null, string, number | null]
          >(
            `WITH due AS (
               SELECT id, webhook_id, next_attempt_at FROM webhook_deliveries
               WHERE state = 'pending' AND next_attempt_at <= ?1 AND (lease_until IS NULL OR lease_until <= ?1) AND (?3 IS NULL OR event_id = ?3)
                 AND webhook_id NOT IN (SELECT key FROM json_each(?4) WHERE value >= ?5)
               ORDER BY next_attempt_at, id LIMIT ?2
             ), placed AS (
               SELECT due.id, due.next_attempt_at,
                 row_number() OVER (PARTITION BY due.webhook_id ORDER BY due.next_attempt_at, due.id) + coalesce((SELECT value FROM json_each(?4) WHERE key = due.webhook_id), 0) AS place
               FROM due
             )
             SELECT d.id, d.attempts, d.webhook_id, w.url, w.secret, d.event_id, e.type, e.body, e.created_at
             FROM placed p JOIN webhook_deliveries d ON d.id = p.id JOIN webhooks w ON w.id = d.webhook_id JOIN webhook_events e ON e.id = d.event_id
             WHERE ?5 IS NULL OR p.place <= ?5
             ORDER BY p.next_attempt_at, p.id`,
          )
          .all(nowMs, limit, eventId ?? null, inFlight, share);
        const lease = this.db.query("UPDATE webhook_deliveries SET lease_until = ?2 WHERE id = ?1");
        for (const row of rows) lease.run(row.id, nowMs + leaseMs);
        return rows.map(
          (row): DueDelivery => ({
            deliveryId: row.id,
            attempt: row.attempts + 1,
            webhookId: row.webhook_id,
            url: row.url,
            secret: row.secret,
            eventId: row.event_id,
            eventType: row.type,
            body: row.body,
            eventCreatedAt: row.created_at,
          }),
        );
      })
      .immediate();
  }

  async recordAttempt(result: AttemptResult): Promise<boolean> {
    return this.db
      .transaction(() => {
        const moved = this.db
          .query(
            `UPDATE webhook_deliveries SET attempts = ?2, state = ?3, next_attempt_at = coalesce(?4, next_attempt_at), lease_until = NULL
             WHERE id = ?1 AND event_id = ?5 AND webhook_id = ?6 AND attempts = ?2 - 1`,
          )
          .run(result.deliveryId, result.attempt, result.state, result.nextAttemptAt, result.eventId, result.webhookId);
        if (moved.changes === 0) return false;
        this.db
          .query("INSERT INTO webhook_attempts (delivery_id, attempt, at, status, duration_ms, response, error) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)")
          .run(result.deliveryId, result.attempt, result.at, result.status, Math.round(result.durationMs), result.response, result.error);
        return true;
      })
      .immediate();
  }

  async pruneOutbox(before: string): Promise<number> {
    return this.db
      .transaction(() => {
        const done = "SELECT d.id FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id WHERE d.state <> 'pending' AND e.created_at < ?1";
        this.db.query(`DELETE FROM webhook_attempts WHERE delivery_id IN (${done})`).run(before);
        this.db.query(`DELETE FROM webhook_deliveries WHERE id IN (${done})`).run(before);
        return this.db
          .query("DELETE FROM webhook_events WHERE created_at < ?1 AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = webhook_events.id)")
          .run(before).changes;
      })
      .immediate();
  }

  /** Every webhook with its secret, oldest first, inside the caller's read transaction (exportState). */
  exportRows(): WebhookRecord[] {
    return this.db
      .query<WebhookRow & { secret: string }, []>("SELECT id, url, events, secret, created_at FROM webhooks ORDER BY created_at, rowid")
      .all()
      .map((row) => ({ ...toWebhook(row), secret: row.secret }));
  }

  /** Every event recorded with a once key, oldest first, inside the caller's read transaction (exportState). */
  exportOnceEvents(): OnceEventRecord[] {
    return this.db
      .query<{ id: string; type: string; body: string; created_at: string; once_key: string }, []>(
        "SELECT id, type, body, created_at, once_key FROM webhook_events WHERE once_key IS NOT NULL ORDER BY created_at, id",
      )
      .all()
      .map((row) => ({ id: row.id, type: row.type, body: row.body, createdAt: row.created_at, onceKey: row.once_key }));
  }

  /**
   * Inside the caller's write transaction (importState): `replace` empties the webhook
   * tables first. The once events are recorded without deliveries (told already); one
   * whose id or once key the store holds already is told there too, and is skipped.
   */
  importRows(webhooks: readonly WebhookRecord[], replace: boolean, onceEvents: readonly OnceEventRecord[] = []): void {
    if (replace) for (const table of ["webhook_attempts", "webhook_deliveries", "webhook_events", "webhooks"]) this.db.run(`DELETE FROM ${table}`);
    const insert = this.db.query("INSERT INTO webhooks (id, url, events, secret, created_at) VALUES (?1, ?2, ?3, ?4, ?5)");
    for (const w of webhooks) insert.run(w.id, w.url, eventsColumn(w.events), w.secret, w.createdAt);
    const once = this.db.query("INSERT INTO webhook_events (id, type, body, created_at, once_key) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT DO NOTHING");
    for (const e of onceEvents) once.run(e.id, e.type, e.body, e.createdAt, e.onceKey);
  }

  async listDeliveries(webhookId: string, limit: number): Promise<DeliveryRecord[]> {
    return this.db
      .transaction(() => {
        const deliveries = this.db
          .query<{ id: number; event_id: string; type: string; created_at: string; state: DeliveryState; next_attempt_at: number }, [string, number]>(
            `SELECT d.id, d.event_id, e.type, e.created_at, d.state, d.next_attempt_at FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
             WHERE d.webhook_id = ?1 ORDER BY d.id DESC LIMIT ?2`,
          )
          .all(webhookId, limit);
        const attempts = this.db
          .query<AttemptRow, [string, number]>(
            `SELECT a.* FROM webhook_attempts a WHERE a.delivery_id IN (SELECT id FROM webhook_deliveries WHERE webhook_id = ?1 ORDER BY id DESC LIMIT ?2)
             ORDER BY a.delivery_id, a.attempt`,
          )
          .all(webhookId, limit);
        return deliveryRecords(deliveries, attempts);
      })
      .deferred();
  }
}

function toWebhook(row: WebhookRow): Webhook {
  return { id: row.id, url: row.url, events: eventsOf(row.events), createdAt: row.created_at };
}

/** Deliveries with their attempts, as both stores list them. */
export function deliveryRecords(
  deliveries: readonly { id: number; event_id: string; type: string; created_at: string; state: DeliveryState; next_attempt_at: number }[],
  attempts: readonly AttemptRow[],
): DeliveryRecord[] {
  const byDelivery = new Map<number, DeliveryAttempt[]>();
  for (const row of attempts) {
    let list = byDelivery.get(Number(row.delivery_id));
    if (!list) byDelivery.set(Number(row.delivery_id), (list = []));
    list.push({ attempt: row.attempt, at: row.at, status: row.status, durationMs: row.duration_ms, response: row.response, error: row.error });
  }
  return deliveries.map((row) => ({
    id: Number(row.id),
    eventId: row.event_id,
    eventType: row.type,
    createdAt: row.created_at,
    state: row.state,
    attempts: byDelivery.get(Number(row.id)) ?? [],
    nextAttemptAt: row.state === "pending" ? new Date(Number(row.next_attempt_at)).toISOString() : null,
  }));
}

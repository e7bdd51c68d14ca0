import type { SQL } from "bun";
import { eventBody, newEventId } from "../events/event-types.ts";
import { newWebhookSecret } from "../events/signature.ts";
import { crossedThresholds, thresholdData, thresholdOnceKey } from "../events/usage-thresholds.ts";
import { deliveryRecords, type UsageCrossing } from "./sqlite-webhooks.ts";
import type {
  AttemptResult,
  Audit,
  ClaimOptions,
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
import { insertEvent, writeChangeRecord } from "./postgres-records.ts";

/** What PostgresWebhooks needs of its PostgresStore: the pool, and its error handling. */
export interface PostgresAccess {
  /** The pool now (a reset replaces it). */
  sql(): SQL;
  /** Runs a write, turning an unreachable database into StoreUnavailableError. */
  guard<T>(work: () => Promise<T>): Promise<T>;
  /** Runs a read, tried again once on a broken connection. */
  read<T>(work: () => Promise<T>): Promise<T>;
  readonly clock: () => Date;
}

interface WebhookRow {
  id: string;
  url: string;
  events: string;
  created_at: Date;
}

/**
 * Claims due deliveries: rows another server is claiming are skipped (SKIP LOCKED), and
 * a row claimed and committed meanwhile is read again under the lock, its new lease
 * excluding it. So one server holds a delivery at a time. Of one webhook, no more are
 * claimed than its share ($6) less those this server has in flight ($5, by webhook id);
 * a row locked and left out for that keeps no lease, and the lock ends with the statement.
 */
const CLAIM = `WITH busy AS (
    SELECT key AS webhook_id, value::int AS n FROM jsonb_each_text($5::text::jsonb)
  ), due AS (
    SELECT id, webhook_id, next_attempt_at FROM webhook_deliveries
    WHERE state = 'pending' AND next_attempt_at <= $1 AND (lease_until IS NULL OR lease_until <= $1) AND ($3::text IS NULL OR event_id = $3::text)
      AND webhook_id NOT IN (SELECT webhook_id FROM busy WHERE n >= $6::int)
    ORDER BY next_attempt_at, id LIMIT $2 FOR UPDATE SKIP LOCKED
  ), placed AS (
    SELECT due.id, row_number() OVER (PARTITION BY due.webhook_id ORDER BY due.next_attempt_at, due.id) + coalesce(busy.n, 0) AS place
    FROM due LEFT JOIN busy ON busy.webhook_id = due.webhook_id
  ), claimed AS (
    UPDATE webhook_deliveries d SET lease_until = $1 + $4 FROM placed WHERE d.id = placed.id AND ($6::int IS NULL OR placed.place <= $6::int)
    RETURNING d.id, d.attempts, d.webhook_id, d.event_id, d.next_attempt_at
  )
  SELECT c.id, c.attempts, c.webhook_id, w.url, w.secret, c.event_id, e.type, e.body, e.created_at
  FROM claimed c JOIN webhooks w ON w.id = c.webhook_id JOIN webhook_events e ON e.id = c.event_id
  ORDER BY c.next_attempt_at, c.id`;

/** The webhook tables of a PostgreSQL state database (schema migration 4), for PostgresStore. */
export class PostgresWebhooks implements WebhookStore {
  constructor(private readonly db: PostgresAccess) {}

  async createWebhook(url: string, events: readonly string[], audit?: Audit<IssuedWebhook>): Promise<IssuedWebhook> {
    const webhook: Webhook = { id: newWebhookId(), url, events: [...events], createdAt: this.db.clock().toISOString() };
    const issued = { webhook, secret: newWebhookSecret() };
    await this.db.guard(() =>
      this.db.sql().begin(async (tx) => {
        // SHARE ROW EXCLUSIVE conflicts with itself and with other writes of the table (not
        // with reads, so claims go on): two servers adding one URL at once take turns, and
        // the second finds the first's.
        await tx`LOCK TABLE webhooks IN SHARE ROW EXCLUSIVE MODE`;
        const existing = webhookOfReceiver(await tx<{ id: string; url: string }[]>`SELECT id, url FROM webhooks ORDER BY created_at, seq`, url);
        if (existing !== undefined) throw new DuplicateWebhookError(existing);
        await tx`INSERT INTO webhooks (id, url, events, secret, created_at) VALUES (${webhook.id}, ${url}, ${eventsColumn(events)}, ${issued.secret}, ${webhook.createdAt}::timestamptz)`;
        await writeChangeRecord(tx, audit?.(issued, null) ?? null);
      }),
    );
    return issued;
  }

  async listWebhooks(): Promise<Webhook[]> {
    const rows = await this.db.read(() => this.db.sql()<WebhookRow[]>`SELECT id, url, events, created_at FROM webhooks ORDER BY created_at, seq`);
    return rows.map(toWebhook);
  }

  async getWebhook(id: string): Promise<Webhook | null> {
    const [row] = await this.db.read(() => this.db.sql()<WebhookRow[]>`SELECT id, url, events, created_at FROM webhooks WHERE id = ${id}`);
    return row ? toWebhook(row) : null;
  }

  async removeWebhook(id: string, audit?: Audit<Webhook>): Promise<boolean> {
    return this.db.guard(() =>
      this.db.sql().begin(async (tx) => {
        const [row] = await tx<WebhookRow[]>`DELETE FROM webhooks WHERE id = ${id} RETURNING id, url, events, created_at`;
        if (!row) return false;
        await writeChangeRecord(tx, audit?.(toWebhook(row), null) ?? null);
        return true;
      }),
    );
  }

  async addEvent(event: NewEvent): Promise<boolean> {
    return this.db.guard(() => insertEvent(this.db.sql(), event));
  }

  async claimDeliveries({ limit, nowMs, leaseMs, eventId, perWebhook }: ClaimOptions): Promise<DueDelivery[]> {
    const rows = await this.db.guard(() =>
      this.db.sql().unsafe<
        { id: string; attempts: number; webhook_id: string; url: string; secret: string; event_id: string; type: string; body: string; created_at: Date }[]
      >(CLAIM, [nowMs, limit, eventId ?? null, leaseMs, JSON.stringify(perWebhook?.inFlight ?? {}), perWebhook?.limit ?? null]),
    );
    return rows.map(
      (row): DueDelivery => ({
        deliveryId: Number(row.id),
        attempt: row.attempts + 1,
        webhookId: row.webhook_id,
        url: row.url,
        secret: row.secret,
        eventId: row.event_id,
        eventType: row.type,
        body: row.body,
        eventCreatedAt: row.created_at.toISOString(),
      }),
    );
  }

  async recordAttempt(result: AttemptResult): Promise<boolean> {
    return this.db.guard(() =>
      this.db.sql().begin(async (tx) => {
        const moved = await tx`UPDATE webhook_deliveries SET attempts = ${result.attempt}, state = ${result.state},
            next_attempt_at = coalesce(${result.nextAttemptAt}::int8, next_attempt_at), lease_until = NULL
          WHERE id = ${result.deliveryId} AND event_id = ${result.eventId} AND webhook_id = ${result.webhookId} AND attempts = ${result.attempt - 1}`;
        if (moved.count === 0) return false;
        await tx`INSERT INTO webhook_attempts (delivery_id, attempt, at, status, duration_ms, response, error)
          VALUES (${result.deliveryId}, ${result.attempt}, ${result.at}::timestamptz, ${result.status}, ${Math.round(result.durationMs)}, ${result.response}, ${result.error})`;
        return true;
      }),
    );
  }

  async pruneOutbox(before: string): Promise<number> {
    return this.db.guard(() =>
      this.db.sql().begin(async (tx) => {
        await tx`DELETE FROM webhook_deliveries d USING webhook_events e WHERE e.id = d.event_id AND d.state <> 'pending' AND e.created_at < ${before}::timestamptz`;
        const removed = await tx`DELETE FROM webhook_events e WHERE e.created_at < ${before}::timestamptz
          AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id)`;
        return removed.count;
      }),
    );
  }

  async listDeliveries(webhookId: string, limit: number): Promise<DeliveryRecord[]> {
    return this.db.read(() =>
      this.db.sql().begin("ISOLATION LEVEL REPEATABLE READ READ ONLY", async (tx) => {
        const deliveries = await tx`SELECT d.id, d.event_id, e.type, e.created_at, d.state, d.next_attempt_at FROM webhook_deliveries d
          JOIN webhook_events e ON e.id = d.event_id WHERE d.webhook_id = ${webhookId} ORDER BY d.id DESC LIMIT ${limit}`;
        const attempts = await tx`SELECT a.* FROM webhook_attempts a
          WHERE a.delivery_id IN (SELECT id FROM webhook_deliveries WHERE webhook_id = ${webhookId} ORDER BY id DESC LIMIT ${limit}) ORDER BY a.delivery_id, a.attempt`;
        return deliveryRecords(
          deliveries.map((row: { id: string; event_id: string; type: string; created_at: Date; state: DeliveryState; next_attempt_at: string }) => ({
            ...row,
            id: Number(row.id),
            created_at: row.created_at.toISOString(),
            next_attempt_at: Number(row.next_attempt_at),
          })),
          attempts.map((row: { delivery_id: string; attempt: number; at: Date; status: number | null; duration_ms: number; response: string | null; error: string | null }) => ({
            ...row,
            delivery_id: Number(row.delivery_id),
            at: row.at.toISOString(),
          })),
        );
      }),
    );
  }
}

/** Every webhook with its secret, oldest first, in the caller's transaction (exportState). */
export async function exportWebhookRows(tx: SQL): Promise<WebhookRecord[]> {
  const rows = await tx<(WebhookRow & { secret: string })[]>`SELECT id, url, events, secret, created_at FROM webhooks ORDER BY created_at, seq`;
  return rows.map((row) => ({ ...toWebhook(row), secret: row.secret }));
}

/** Every event recorded with a once key, oldest first, in the caller's transaction (exportState). */
export async function exportOnceEvents(tx: SQL): Promise<OnceEventRecord[]> {
  const rows = await tx<{ id: string; type: string; body: string; created_at: Date; once_key: string }[]>`SELECT id, type, body, created_at, once_key FROM webhook_events
    WHERE once_key IS NOT NULL ORDER BY created_at, id COLLATE "C"`;
  return rows.map((row) => ({ id: row.id, type: row.type, body: row.body, createdAt: row.created_at.toISOString(), onceKey: row.once_key }));
}

/** Rows one statement of importWebhookRows carries (each column is one array parameter). */
const ONCE_CHUNK = 5000;

/**
 * In the caller's transaction (importState, its tables locked): `replace` empties the
 * webhook tables first. The once events are recorded without deliveries (told already);
 * one whose id or once key the database holds already is told there too, and is skipped
 * (webhook_events is not locked: a server may record one meanwhile).
 */
export async function importWebhookRows(tx: SQL, webhooks: readonly WebhookRecord[], replace: boolean, onceEvents: readonly OnceEventRecord[] = []): Promise<void> {
  if (replace) {
    await tx`DELETE FROM webhook_attempts`;
    await tx`DELETE FROM webhook_deliveries`;
    await tx`DELETE FROM webhook_events`;
    await tx`DELETE FROM webhooks`;
  }
  if (webhooks.length > 0) {
    await tx`INSERT INTO webhooks (id, url, events, secret, created_at)
      SELECT id, url, events, secret, created_at::timestamptz
      FROM unnest(${tx.array(webhooks.map((w) => w.id), "TEXT")}, ${tx.array(webhooks.map((w) => w.url), "TEXT")}, ${tx.array(webhooks.map((w) => eventsColumn(w.events)), "TEXT")},
                  ${tx.array(webhooks.map((w) => w.secret), "TEXT")}, ${tx.array(webhooks.map((w) => w.createdAt), "TEXT")})
        WITH ORDINALITY AS t(id, url, events, secret, created_at, n)
      ORDER BY n`;
  }
  for (let start = 0; start < onceEvents.length; start += ONCE_CHUNK) {
    const chunk = onceEvents.slice(start, start + ONCE_CHUNK);
    await tx`INSERT INTO webhook_events (id, type, body, created_at, once_key)
      SELECT id, type, body, created_at::timestamptz, once_key
      FROM unnest(${tx.array(chunk.map((e) => e.id), "TEXT")}, ${tx.array(chunk.map((e) => e.type), "TEXT")}, ${tx.array(chunk.map((e) => e.body), "TEXT")},
                  ${tx.array(chunk.map((e) => e.createdAt), "TEXT")}, ${tx.array(chunk.map((e) => e.onceKey), "TEXT")})
        WITH ORDINALITY AS t(id, type, body, created_at, once_key, n)
      ORDER BY n
      ON CONFLICT DO NOTHING`;
  }
}

/**
 * Inside a charge group's transaction (PostgresStore.applyGroup), after its usage rows
 * are locked and updated: records a usage.threshold event for each line a key's units
 * crossed. No round trip unless a line was crossed.
 */
export async function recordCrossings(tx: SQL, crossings: readonly UsageCrossing[], now: () => Date): Promise<void> {
  for (const crossing of crossings) {
    const lines = crossedThresholds(crossing.before, crossing.after, crossing.limit);
    if (lines.length === 0) continue;
    const [key] = await tx<{ id: string; name: string; plan: string }[]>`SELECT id, name, plan FROM keys WHERE id = ${crossing.keyId}`;
    if (!key) continue;
    const at = now();
    for (const percent of lines) {
      await insertEvent(tx, {
        id: newEventId(),
        type: "usage.threshold",
        body: eventBody("usage.threshold", thresholdData(key, crossing.period, percent, crossing.after, crossing.limit!), at),
        createdAt: at.toISOString(),
        onceKey: thresholdOnceKey(crossing.keyId, crossing.period, percent),
      });
    }
  }
}

function toWebhook(row: WebhookRow): Webhook {
  return { id: row.id, url: row.url, events: eventsOf(row.events), createdAt: row.created_at.toISOString() };
}

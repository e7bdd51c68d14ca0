import { AuditLog, changesBetween, type Actor } from "../audit/audit-log.ts";
import type { DeliveryRecord, DeliveryState, IssuedWebhook, Store, Webhook } from "../store/store.ts";
import { DuplicateWebhookError } from "../store/webhook-ids.ts";
import type { AttemptReport, Deliverer } from "./deliverer.ts";
import { eventBody, EVENT_TYPES, isEventType, newEventId, TEST_EVENT_TYPE } from "./event-types.ts";
import { webhookUrlError } from "./webhook-url.ts";

/** A request about webhooks that is refused: bad input (`invalid`) or no such webhook. */
export class WebhookRefusal extends Error {
  override readonly name = "WebhookRefusal";
  constructor(
    readonly kind: "invalid" | "not_found",
    message: string,
  ) {
    super(message);
  }
}

/** How many deliveries a listing shows: the latest. */
export const LISTED_DELIVERIES = 50;

/**
 * What the admin API, the console and the CLI do with webhooks, in one place: checks
 * the input, then asks the store, which writes each change with its audit entry in one
 * transaction. A refusal changes nothing.
 */
export class Webhooks {
  private readonly audit: AuditLog;

  constructor(
    private readonly store: Store,
    private readonly now: () => Date,
  ) {
    this.audit = new AuditLog(store, now);
  }

  /**
   * Registers a webhook; the answer carries its secret, which is never shown again (nor
   * recorded in the audit log, which has the events and the URL as shownWebhookUrl shows
   * it, its path and query, which may hold the receiver's secret, taken out by the log
   * itself: see scrubEntry). A URL another webhook
   * has already is refused, naming that webhook: one receiver, one webhook.
   */
  async add(actor: Actor, url: string, events: readonly string[]): Promise<IssuedWebhook> {
    const refused = webhookUrlError(url);
    if (refused) throw new WebhookRefusal("invalid", refused);
    const wanted = checkEvents(events);
    try {
      return await this.store.webhooks.createWebhook(url, wanted, (issued) =>
        this.audit.change({ actor, action: "webhook.created", target: issued.webhook.id, changes: changesBetween(null, { url: issued.webhook.url, events: issued.webhook.events }) }),
      );
    } catch (error) {
      if (error instanceof DuplicateWebhookError) throw new WebhookRefusal("invalid", error.message);
      throw error;
    }
  }

  list(): Promise<Webhook[]> {
    return this.store.webhooks.listWebhooks();
  }

  async get(id: string): Promise<Webhook> {
    const webhook = await this.store.webhooks.getWebhook(id);
    if (!webhook) throw noSuchWebhook(id);
    return webhook;
  }

  async remove(actor: Actor, id: string): Promise<void> {
    const removed = await this.store.webhooks.removeWebhook(id, (webhook) =>
      this.audit.change({ actor, action: "webhook.removed", target: id, changes: changesBetween({ url: webhook.url, events: webhook.events }, {}) }),
    );
    if (!removed) throw noSuchWebhook(id);
  }

  async deliveries(id: string): Promise<DeliveryRecord[]> {
    await this.get(id);
    return this.store.webhooks.listDeliveries(id, LISTED_DELIVERIES);
  }

  /**
   * Sends a test event (`webhook.test`) to this webhook alone: recorded in the outbox as
   * any event (so a failure is retried and logged), then attempted at once. Answers the
   * attempt, or null when another server claimed it first.
   */
  async test(id: string, deliverer: Deliverer): Promise<{ eventId: string; attempt: TestAttempt | null }> {
    const webhook = await this.get(id);
    const at = this.now();
    const eventId = newEventId();
    const body = eventBody(TEST_EVENT_TYPE, { webhook: { id: webhook.id }, message: "a test event sent by iplookup" }, at);
    await this.store.webhooks.addEvent({ id: eventId, type: TEST_EVENT_TYPE, body, createdAt: at.toISOString(), webhookId: webhook.id });
    const [attempt] = await deliverer.deliverDue(eventId);
    return { eventId, attempt: attempt ?? null };
  }

  /**
   * The first attempt of a test event that another server claimed before test() could
   * (a running server's deliverer), once that server has recorded it, with the state it
   * left the delivery in; null when none is recorded within `waitMs`. For a caller that
   * must know the outcome (the command line's exit code), not only that it is under way.
   */
  async firstAttempt(id: string, eventId: string, waitMs: number, pollMs = 200): Promise<TestAttempt | null> {
    const until = performance.now() + waitMs;
    for (;;) {
      const delivery = (await this.store.webhooks.listDeliveries(id, LISTED_DELIVERIES)).find((record) => record.eventId === eventId);
      const first = delivery?.attempts[0];
      if (delivery && first) {
        const delivered = first.status !== null && first.status >= 200 && first.status < 300;
        // A later state (a retry since) is not this attempt's: only delivered, or not.
        const state: DeliveryState = delivered ? "delivered" : delivery.attempts.length === 1 && delivery.state === "failed" ? "failed" : "pending";
        return { ...first, state };
      }
      // The delivery is gone (its webhook removed meanwhile), or the time is up.
      if (!delivery || performance.now() >= until) return null;
      await Bun.sleep(pollMs);
    }
  }
}

/** What a test event's attempt came to, as test() and firstAttempt() answer it. */
export type TestAttempt = Pick<AttemptReport, "attempt" | "status" | "durationMs" | "response" | "error" | "state">;

/** The event types asked for, each known, without repeats, in the order of EVENT_TYPES. */
export function checkEvents(events: readonly string[]): string[] {
  const wanted = events.map((event) => event.trim()).filter((event) => event !== "");
  if (wanted.length === 0) throw new WebhookRefusal("invalid", `name at least one event: ${EVENT_TYPES.join(", ")}`);
  for (const event of wanted) {
    if (!isEventType(event)) throw new WebhookRefusal("invalid", `"${event}" is not an event; the events are ${EVENT_TYPES.join(", ")}`);
  }
  return EVENT_TYPES.filter((event) => wanted.includes(event));
}

function noSuchWebhook(id: string): WebhookRefusal {
  return new WebhookRefusal("not_found", `there is no webhook ${id}`);
}

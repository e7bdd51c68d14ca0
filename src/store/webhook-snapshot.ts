import { isEventType } from "../events/event-types.ts";
import { SECRET_PREFIX } from "../events/signature.ts";
import { webhookUrlError } from "../events/webhook-url.ts";
import { StoreError, type OnceEventRecord, type WebhookRecord } from "./store.ts";

const WEBHOOK_ID = /^wh_[a-z2-7]{16}$/;
/** `msg_` and base64url, as newEventId makes them. */
const EVENT_ID = /^msg_[A-Za-z0-9_-]{1,64}$/;

/**
 * The webhooks of a snapshot, checked before a store imports them (see checkSnapshot):
 * well-formed unique ids, URLs a webhook may have, known events (at least one), a
 * `whsec_` secret of 24 bytes, an ISO 8601 UTC creation time; and its once events:
 * well-formed unique ids, known types, a body, unique once keys, an ISO 8601 UTC time.
 * Throws StoreError naming the first fault.
 */
export function checkWebhookRecords(webhooks: readonly WebhookRecord[], onceEvents: readonly OnceEventRecord[] = []): void {
  const ids = new Set<string>();
  for (const webhook of webhooks) {
    if (!WEBHOOK_ID.test(webhook.id)) throw new StoreError(`"${webhook.id}" is not a webhook id`);
    if (ids.has(webhook.id)) throw new StoreError(`the webhook ${webhook.id} appears twice`);
    ids.add(webhook.id);
    const badUrl = webhookUrlError(webhook.url, "stored");
    if (badUrl) throw new StoreError(`the webhook ${webhook.id}: ${badUrl}`);
    if (webhook.events.length === 0 || !webhook.events.every(isEventType) || new Set(webhook.events).size !== webhook.events.length) {
      throw new StoreError(`the webhook ${webhook.id} has events that are not known, repeated or none`);
    }
    if (!webhook.secret.startsWith(SECRET_PREFIX) || Buffer.from(webhook.secret.slice(SECRET_PREFIX.length), "base64").length !== 24) {
      throw new StoreError(`the webhook ${webhook.id} has no valid signing secret`);
    }
    const created = new Date(webhook.createdAt);
    if (Number.isNaN(created.getTime()) || created.toISOString() !== webhook.createdAt) throw new StoreError(`the webhook ${webhook.id} has a created_at that is not an ISO 8601 UTC time`);
  }
  const eventIds = new Set<string>();
  const onceKeys = new Set<string>();
  for (const event of onceEvents) {
    if (typeof event.id !== "string" || !EVENT_ID.test(event.id)) throw new StoreError(`"${String(event.id)}" is not an event id`);
    if (eventIds.has(event.id)) throw new StoreError(`the event ${event.id} appears twice`);
    eventIds.add(event.id);
    if (typeof event.type !== "string" || !isEventType(event.type)) throw new StoreError(`the event ${event.id} is of a type that is not known`);
    if (typeof event.body !== "string") throw new StoreError(`the event ${event.id} has no body`);
    if (typeof event.onceKey !== "string" || event.onceKey === "") throw new StoreError(`the event ${event.id} has no once key`);
    if (onceKeys.has(event.onceKey)) throw new StoreError(`the once key of the event ${event.id} appears twice`);
    onceKeys.add(event.onceKey);
    const created = new Date(event.createdAt);
    if (Number.isNaN(created.getTime()) || created.toISOString() !== event.createdAt) throw new StoreError(`the event ${event.id} has a created_at that is not an ISO 8601 UTC time`);
  }
}

import { randomBytes } from "node:crypto";
import { EVENT_TYPES, type EventType } from "./event-names.ts";

/**
 * The events iplookup sends to webhooks (CONTRACT §16; their names are in event-names.ts,
 * which the console shares), and the body each delivery carries. The body follows the
 * Standard Webhooks payload shape:
 *
 *   {"type": "usage.threshold", "timestamp": "2026-11-25T08:00:00.000Z", "data": {…}}
 *
 * `timestamp` is when the event happened (not when it was sent: a retry sends the same
 * bytes). `data` never holds a secret: keys are named by id, name and plan only.
 */

export { EVENT_TYPES, type EventType } from "./event-names.ts";

/** The event `test` sends: only to the webhook it is sent for, never subscribed to. */
export const TEST_EVENT_TYPE = "webhook.test";

export function isEventType(text: string): text is EventType {
  return (EVENT_TYPES as readonly string[]).includes(text);
}

/**
 * A new event's id, `msg_` and 22 base62-ish characters (128 random bits): sent as
 * `webhook-id`, the same on every retry, so a receiver drops what it has seen.
 */
export function newEventId(): string {
  return `msg_${randomBytes(16).toString("base64url")}`;
}

/** The body of an event, as it is stored and sent (the exact bytes that are signed). */
export function eventBody(type: string, data: Readonly<Record<string, unknown>>, at: Date): string {
  return JSON.stringify({ type, timestamp: at.toISOString(), data });
}

/** A key as an event names it: never its secret. */
export interface EventKey {
  readonly id: string;
  readonly name: string;
  readonly plan: string;
}

export function keyData(key: EventKey): { id: string; name: string; plan: string } {
  return { id: key.id, name: key.name, plan: key.plan };
}

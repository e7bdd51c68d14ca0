/**
 * The events iplookup sends to webhooks (CONTRACT §16), by name, each with a few words on
 * when it is sent. The admin console's script bundles this file too, so it imports
 * nothing and uses no Bun or Node API.
 */
export const EVENT_TYPES = [
  "usage.threshold",
  "key.created",
  "key.rotated",
  "key.revoked",
  "key.expiring",
  "data.updated",
  "data.update_failed",
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** When each event is sent, as the console's webhook form lists them. */
export const EVENT_SUMMARIES: Readonly<Record<EventType, string>> = {
  "usage.threshold": "a key reaches 80%, 90%, 100% of its units",
  "key.created": "a key is created",
  "key.rotated": "a key gets a new secret",
  "key.revoked": "a key is revoked",
  "key.expiring": "7 days before a key expires",
  "data.updated": "the data set was updated",
  "data.update_failed": "a data update failed",
};

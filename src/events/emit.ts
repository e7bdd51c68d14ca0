import type { ApiKey, NewEvent, Store } from "../store/store.ts";
import { eventBody, keyData, newEventId, type EventKey, type EventType } from "./event-types.ts";

/**
 * The emitters: each puts one event in the store's outbox (see WebhookStore.addEvent),
 * whence the deliverer sends it to every webhook subscribed to its type. An event that
 * cannot be recorded (the store is away) must not undo or fail what it reports: callers
 * treat a rejection as a warning. The events of a change an operator makes (key.created,
 * …) are not emitted here but written in the change's own transaction, with its audit
 * entry (see KeyService); usage.threshold is recorded inside the charge's transaction
 * (see usage-thresholds.ts).
 */

/** An event of `type` with `data`, happened at `at`, for the outbox. */
export function newEvent(type: EventType, data: Readonly<Record<string, unknown>>, at: Date, onceKey?: string): NewEvent {
  return { id: newEventId(), type, body: eventBody(type, data, at), createdAt: at.toISOString(), ...(onceKey !== undefined ? { onceKey } : {}) };
}

/** Records an event of `type` with `data`, happened at `at`. */
export function emitEvent(store: Store, type: EventType, data: Readonly<Record<string, unknown>>, at: Date, onceKey?: string): Promise<boolean> {
  return store.webhooks.addEvent(newEvent(type, data, at, onceKey));
}

/** key.created, key.rotated, key.revoked: the key by id, name and plan (never its secret). */
export function keyEvent(type: "key.created" | "key.rotated" | "key.revoked", key: EventKey, at: Date): NewEvent {
  return newEvent(type, { key: keyData(key) }, at);
}

/** Records a key event (see keyEvent) on its own. */
export function emitKeyEvent(store: Store, type: "key.created" | "key.rotated" | "key.revoked", key: EventKey, at: Date): Promise<boolean> {
  return store.webhooks.addEvent(keyEvent(type, key, at));
}

/** How long before a key's expiry key.expiring fires (CONTRACT §16). */
export const EXPIRING_NOTICE_MS = 7 * 86_400_000;

/** A key that may carry an expiry (`expires_at`, ISO 8601, null or absent: never). */
export type MaybeExpiringKey = EventKey & { readonly revokedAt: string | null; readonly expiresAt?: string | null };

/** A key as key.expiring reads it: its expiry is one of its controls (CONTRACT §16). */
export function expiringView(key: ApiKey): MaybeExpiringKey {
  return { ...key, expiresAt: key.controls?.expiresAt ?? null };
}

/**
 * key.expiring: for each active key whose `expiresAt` falls within the next 7 days (and
 * has not passed), one event per key and expiry time (the once key holds both, so a key
 * given a new expiry is told again, and a sweep run by every server of a fleet, or every
 * minute, fires it once). Keys without `expiresAt` are skipped, so this runs as it is on
 * a store whose keys carry no expiry yet. Answers the number of events recorded.
 */
export async function emitExpiringKeys(store: Store, keys: readonly MaybeExpiringKey[], now: Date): Promise<number> {
  let recorded = 0;
  for (const key of keys) {
    const event = expiringEvent(key, now);
    if (event && (await store.webhooks.addEvent(event))) recorded++;
  }
  return recorded;
}

/** key.expiring for one key (see emitExpiringKeys), or null when it is not due. */
export function expiringEvent(key: MaybeExpiringKey, now: Date): NewEvent | null {
  if (key.revokedAt !== null || !key.expiresAt) return null;
  const expires = Date.parse(key.expiresAt);
  if (Number.isNaN(expires) || expires <= now.getTime() || expires - now.getTime() > EXPIRING_NOTICE_MS) return null;
  const data = { key: keyData(key), expires_at: new Date(expires).toISOString() };
  return newEvent("key.expiring", data, now, `key.expiring ${key.id} ${new Date(expires).toISOString()}`);
}

/** data.updated: the data file and its new version, and what changed (sources, credentials removed). */
export function emitDataUpdated(store: Store, info: { path: string; dataVersion: string; builtAt: string; changes: readonly string[] }, at: Date): Promise<boolean> {
  return emitEvent(store, "data.updated", { data: info.path, data_version: info.dataVersion, built_at: info.builtAt, changes: [...info.changes] }, at);
}

/** data.update_failed: the data file and the reason (credentials removed), the installed file unchanged. */
export function emitDataUpdateFailed(store: Store, info: { path: string; reason: string }, at: Date): Promise<boolean> {
  return emitEvent(store, "data.update_failed", { data: info.path, reason: info.reason }, at);
}

import { keyNameError } from "./charge-rules.ts";
import { isPeriodId } from "./period.ts";
import { applyPlanChanges } from "./plan-rules.ts";
import { StoreError, type StateSnapshot } from "./store.ts";
import { isDayId } from "./usage-days.ts";
import { checkCorrectionRow } from "./correction-rows.ts";
import { checkSnapshotControls } from "./snapshot-controls.ts";
import { checkWebhookRecords } from "./webhook-snapshot.ts";

const KEY_ID = /^key_[a-z2-7]{16}$/;
const SECRET_HASH = /^[0-9a-f]{64}$/;
const ADMIN_TOKEN_ID = /^adm_[a-z2-7]{16}$/;

/**
 * Checks a snapshot before a store imports it, so that what the databases do not check
 * themselves (SQLite keeps times as text) is refused too: every plan valid and named
 * once; every key with a well-formed id and hash, both unique, a valid name, a plan of
 * the snapshot, and ISO 8601 UTC times; every usage row for a key of the snapshot, a
 * `YYYY-MM` period, named once, with a whole number of units of at least 1; every day
 * row for a key of the snapshot, a real `YYYY-MM-DD` day, named once, with at least one
 * request and one unit and a last use on that day; every admin token with a well-formed
 * id and hash, both unique, a valid name and ISO 8601 UTC times. Throws StoreError naming
 * the first fault.
 */
export function checkSnapshot(snapshot: StateSnapshot): void {
  const plans = new Set<string>();
  for (const plan of snapshot.plans) {
    applyPlanChanges(plan.name, null, { maxBatchSize: plan.maxBatchSize, monthlyUnits: plan.monthlyUnits, rateLimit: plan.rateLimit });
    if (plans.has(plan.name)) throw new StoreError(`the plan "${plan.name}" appears twice`);
    plans.add(plan.name);
  }
  const keys = new Set<string>();
  const hashes = new Set<string>();
  for (const key of snapshot.keys) {
    if (!KEY_ID.test(key.id)) throw new StoreError(`"${key.id}" is not a key id`);
    if (keys.has(key.id)) throw new StoreError(`the key ${key.id} appears twice`);
    keys.add(key.id);
    if (!SECRET_HASH.test(key.secretHash)) throw new StoreError(`the key ${key.id} has no valid secret hash`);
    if (hashes.has(key.secretHash)) throw new StoreError(`the key ${key.id} has the secret hash of another key`);
    hashes.add(key.secretHash);
    const badName = keyNameError(key.name);
    if (badName) throw new StoreError(`the key ${key.id} has a name iplookup does not accept: ${badName}`);
    // Names are trimmed as they are written; one that is not was written by other means.
    if (key.name !== key.name.trim()) throw new StoreError(`the key ${key.id} has a name with spaces at its start or end (${JSON.stringify(key.name)}), which iplookup never writes`);
    if (!plans.has(key.plan)) throw new StoreError(`the key ${key.id} is on the plan "${key.plan}", which the snapshot does not hold`);
    for (const [field, value] of [["created_at", key.createdAt], ["revoked_at", key.revokedAt], ["rotated_at", key.rotatedAt]] as const) {
      if ((value !== null || field === "created_at") && !isIsoTime(value)) throw new StoreError(`the key ${key.id} has a ${field} that is not an ISO 8601 UTC time: ${String(value)}`);
    }
  }
  const rows = new Set<string>();
  for (const row of snapshot.usage) {
    if (!keys.has(row.keyId)) throw new StoreError(`usage of ${row.keyId}, a key the snapshot does not hold`);
    if (!isPeriodId(row.period)) throw new StoreError(`usage of ${row.keyId} in "${row.period}", which is not a YYYY-MM period`);
    if (rows.has(`${row.keyId} ${row.period}`)) throw new StoreError(`usage of ${row.keyId} in ${row.period} appears twice`);
    rows.add(`${row.keyId} ${row.period}`);
    if (!Number.isSafeInteger(row.used) || row.used < 1) throw new StoreError(`usage of ${row.keyId} in ${row.period} is not a whole number of at least 1: ${row.used}`);
  }
  const days = new Set<string>();
  for (const row of snapshot.days ?? []) {
    if (!keys.has(row.keyId)) throw new StoreError(`daily usage of ${row.keyId}, a key the snapshot does not hold`);
    if (!isDayId(row.day)) throw new StoreError(`daily usage of ${row.keyId} on "${row.day}", which is not a YYYY-MM-DD day`);
    if (days.has(`${row.keyId} ${row.day}`)) throw new StoreError(`daily usage of ${row.keyId} on ${row.day} appears twice`);
    days.add(`${row.keyId} ${row.day}`);
    for (const [field, value] of [["requests", row.requests], ["units", row.units]] as const) {
      if (!Number.isSafeInteger(value) || value < 1) throw new StoreError(`daily usage of ${row.keyId} on ${row.day}: ${field} is not a whole number of at least 1: ${value}`);
    }
    if (!isIsoTime(row.lastUsedAt) || row.lastUsedAt.slice(0, 10) !== row.day) throw new StoreError(`daily usage of ${row.keyId} on ${row.day} has a last use that is not a time of that day: ${String(row.lastUsedAt)}`);
  }
  const tokens = new Set<string>();
  const tokenHashes = new Set<string>();
  for (const token of snapshot.adminTokens ?? []) {
    if (!ADMIN_TOKEN_ID.test(token.id)) throw new StoreError(`"${token.id}" is not an admin token id`);
    if (tokens.has(token.id)) throw new StoreError(`the admin token ${token.id} appears twice`);
    tokens.add(token.id);
    if (!SECRET_HASH.test(token.secretHash) || tokenHashes.has(token.secretHash)) throw new StoreError(`the admin token ${token.id} has no valid, unique secret hash`);
    tokenHashes.add(token.secretHash);
    const badName = keyNameError(token.name);
    if (badName || token.name !== token.name.trim()) throw new StoreError(`the admin token ${token.id} has a bad name`);
    if (!isIsoTime(token.createdAt) || (token.revokedAt !== null && !isIsoTime(token.revokedAt))) throw new StoreError(`the admin token ${token.id} has a time that is not ISO 8601 UTC`);
  }
  const blocks = new Set<string>();
  for (const correction of snapshot.corrections ?? []) {
    checkCorrectionRow(correction.cidr, correction.fields, correction.note);
    if (blocks.has(correction.cidr)) throw new StoreError(`the correction of ${correction.cidr} appears twice`);
    blocks.add(correction.cidr);
    if (!isIsoTime(correction.createdAt) || !isIsoTime(correction.updatedAt)) throw new StoreError(`the correction of ${correction.cidr} has a time that is not ISO 8601 UTC`);
  }
  checkSnapshotControls(snapshot, isIsoTime);
  checkWebhookRecords(snapshot.webhooks ?? [], snapshot.onceEvents ?? []);
}

/** `2026-11-05T10:00:00.000Z`, as Date.toISOString writes it. */
function isIsoTime(value: unknown): boolean {
  if (typeof value !== "string") return false;
  const date = new Date(value);
  return !Number.isNaN(date.getTime()) && date.toISOString() === value;
}

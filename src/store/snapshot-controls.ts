import { StoreError, type StateSnapshot } from "./store.ts";

const SECRET_HASH = /^[0-9a-f]{64}$/;

/**
 * What checkSnapshot checks of the parts CONTRACT §16 added: every key's controls of
 * the right shape (a time, lists of strings, a JSON object), a previous secret's hash
 * well formed, unique among every secret hash, and with the time its grace ends; every
 * audit entry with an ISO 8601 UTC time, a non-empty actor, action and target, and an
 * object of changes. Throws StoreError naming the first fault.
 */
export function checkSnapshotControls(snapshot: StateSnapshot, isIsoTime: (value: unknown) => boolean): void {
  const hashes = new Set(snapshot.keys.map((key) => key.secretHash));
  for (const key of snapshot.keys) {
    const controls = key.controls;
    if (controls) {
      if (controls.expiresAt !== null && !isIsoTime(controls.expiresAt)) throw new StoreError(`the key ${key.id} has an expires_at that is not an ISO 8601 UTC time`);
      for (const [field, list] of [["allowed_cidrs", controls.allowedCidrs], ["allowed_origins", controls.allowedOrigins]] as const) {
        if (list !== null && (!Array.isArray(list) || !list.every((item) => typeof item === "string"))) throw new StoreError(`the key ${key.id} has ${field} that is not a list of strings`);
      }
      if (controls.metadata !== null && (typeof controls.metadata !== "object" || Array.isArray(controls.metadata))) throw new StoreError(`the key ${key.id} has metadata that is not a JSON object`);
    }
    if (key.previousSecretHash) {
      if (!SECRET_HASH.test(key.previousSecretHash) || hashes.has(key.previousSecretHash)) throw new StoreError(`the key ${key.id} has no valid, unique previous secret hash`);
      hashes.add(key.previousSecretHash);
      if (!isIsoTime(key.graceUntil)) throw new StoreError(`the key ${key.id} has a previous secret without the ISO 8601 UTC time its grace ends`);
    }
  }
  for (const entry of snapshot.audit ?? []) {
    if (!isIsoTime(entry.at)) throw new StoreError(`an audit entry has a time that is not ISO 8601 UTC: ${String(entry.at)}`);
    for (const field of ["actor", "action", "target"] as const) {
      if (typeof entry[field] !== "string" || entry[field] === "") throw new StoreError(`an audit entry of ${entry.at} has no ${field}`);
    }
    if (typeof entry.changes !== "object" || entry.changes === null || Array.isArray(entry.changes)) throw new StoreError(`an audit entry of ${entry.at} has changes that are not a JSON object`);
  }
}

import type { Database } from "bun:sqlite";
import type { ChangeRecord } from "./store.ts";

/**
 * Inside a change's transaction (see Audit in store.ts): writes its audit entry, so that
 * it is committed with the change or not at all.
 */
export function writeChangeRecord(db: Database, record: ChangeRecord | null): void {
  if (!record) return;
  const { entry } = record;
  db.query("INSERT INTO audit_log (at, actor, action, target, changes) VALUES (?1, ?2, ?3, ?4, ?5)").run(entry.at, entry.actor, entry.action, entry.target, JSON.stringify(entry.changes));
}

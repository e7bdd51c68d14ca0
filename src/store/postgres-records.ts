import type { SQL } from "bun";
import type { ChangeRecord } from "./store.ts";

/**
 * Inside a change's transaction (see Audit in store.ts): writes its audit entry, so that
 * it is committed with the change or not at all.
 */
export async function writeChangeRecord(sql: SQL, record: ChangeRecord | null): Promise<void> {
  if (!record) return;
  const { entry } = record;
  await sql`INSERT INTO audit_log (at, actor, action, target, changes)
    VALUES (${entry.at}::timestamptz, ${entry.actor}, ${entry.action}, ${entry.target}, ${JSON.stringify(entry.changes)})`;
}

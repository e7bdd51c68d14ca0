import { StoreRefusedError, type Generation } from "./store.ts";

/**
 * The generation row (schema.ts, postgres-schema.ts) as both stores read it: the change
 * counter and the store's id, in one read.
 */
export interface GenerationRow {
  /** int8, as text on PostgreSQL. */
  readonly value: number | string;
  readonly store_id: string;
}

/**
 * The change counter of the row read, which is missing (`undefined` from PostgreSQL, `null`
 * from SQLite) while `pg_restore --clean` has created the table but not yet copied its
 * row back, or once the row is deleted. That is the state's fault, not the request's nor
 * iplookup's: StoreRefusedError (503 store_unavailable, the server stays ready on what it
 * holds), and read again on the next poll. `store` names the state in the message.
 */
export function toGeneration(row: GenerationRow | null | undefined, store = "the state"): Generation {
  if (!row) throw new StoreRefusedError(`${store} has no change counter: its table generation has no row (a restore not finished, or the row deleted)`);
  return { storeId: row.store_id, count: Number(row.value) };
}

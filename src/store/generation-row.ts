import type { Generation } from "./store.ts";

/**
 * The generation row (schema.ts, postgres-schema.ts) as both stores read it: the change
 * counter and the store's id, in one read.
 */
export interface GenerationRow {
  /** int8, as text on PostgreSQL. */
  readonly value: number | string;
  readonly store_id: string;
}

export function toGeneration(row: GenerationRow): Generation {
  return { storeId: row.store_id, count: Number(row.value) };
}

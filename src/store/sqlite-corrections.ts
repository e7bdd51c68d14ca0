import type { Database } from "bun:sqlite";
import type { Correction, CorrectionFields, CorrectionSnapshot } from "../corrections/correction.ts";
import { checkCorrectionRow, fieldsJson, holdsAlready, inAddressOrder, toCorrection, type CorrectionRow } from "./correction-rows.ts";
import { StoreUnavailableError } from "./store.ts";
import { toGeneration, type GenerationRow } from "./generation-row.ts";

/**
 * The corrections table of the SQLite state file (schema.ts, migration 3), for
 * SqliteStore. Its triggers move the change counter on every change, so running
 * servers reload the corrections as they reload keys.
 */

const COLUMNS = "cidr, fields, note, created_at, updated_at";

export function listCorrections(db: Database): Correction[] {
  return inAddressOrder(db.query<CorrectionRow, []>(`SELECT ${COLUMNS} FROM corrections`).all().map(toCorrection));
}

/** The corrections and the change counter, in one read transaction. */
export function correctionSnapshot(db: Database): CorrectionSnapshot {
  return db
    .transaction(() => ({
      generation: toGeneration(db.query<GenerationRow, []>("SELECT value, store_id FROM generation WHERE id = 1").get()!),
      corrections: listCorrections(db),
    }))
    .deferred();
}

/**
 * Sets a block's correction in one transaction, which `record` (given the correction and
 * the one it replaced) joins: see Audit in store.ts.
 */
export function putCorrection(db: Database, cidr: string, fields: CorrectionFields, note: string | null, now: string, record: (after: Correction, before: Correction | null) => void): Correction {
  const checked = checkCorrectionRow(cidr, fields, note);
  return unlessLocked(() =>
    db
      .transaction(() => {
        const old = db.query<CorrectionRow, [string]>(`SELECT ${COLUMNS} FROM corrections WHERE cidr = ?1`).get(cidr);
        if (old && holdsAlready(old, fieldsJson(checked), note)) {
          const same = toCorrection(old);
          record(same, same);
          return same;
        }
        const row = db
          .query<CorrectionRow, [string, string, string | null, string]>(
            `INSERT INTO corrections (${COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?4)
             ON CONFLICT (cidr) DO UPDATE SET fields = excluded.fields, note = excluded.note, updated_at = excluded.updated_at
             RETURNING ${COLUMNS}`,
          )
          .get(cidr, fieldsJson(checked), note, now)!;
        const after = toCorrection(row);
        record(after, old ? toCorrection(old) : null);
        return after;
      })
      .immediate(),
  );
}

/** Removes a block's correction in one transaction, which `record` (given the correction removed) joins. */
export function removeCorrection(db: Database, cidr: string, record: (removed: Correction) => void): Correction | null {
  return unlessLocked(() =>
    db
      .transaction(() => {
        const row = db.query<CorrectionRow, [string]>(`DELETE FROM corrections WHERE cidr = ?1 RETURNING ${COLUMNS}`).get(cidr);
        if (!row) return null;
        const removed = toCorrection(row);
        record(removed);
        return removed;
      })
      .immediate(),
  );
}

/**
 * A write that found the state file locked by another process past the connection's
 * busy timeout changed nothing: StoreUnavailableError (503 store_unavailable on the
 * admin API, CONTRACT §13), not an unexplained failure.
 */
function unlessLocked<T>(write: () => T): T {
  try {
    return write();
  } catch (error) {
    if ((error as { code?: unknown })?.code === "SQLITE_BUSY") throw new StoreUnavailableError("the state file is locked by another process; nothing was changed", { cause: error });
    throw error;
  }
}

/** Writes a snapshot's corrections (inside importState's transaction). */
export function insertCorrections(db: Database, corrections: readonly Correction[]): void {
  const insert = db.query(`INSERT INTO corrections (${COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5)`);
  for (const c of corrections) insert.run(c.cidr, fieldsJson(c.fields), c.note, c.createdAt, c.updatedAt);
}

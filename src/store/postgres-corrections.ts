import type { SQL } from "bun";
import type { Correction, CorrectionFields, CorrectionSnapshot } from "../corrections/correction.ts";
import { checkCorrectionRow, fieldsJson, holdsAlready, inAddressOrder, toCorrection, type CorrectionRow } from "./correction-rows.ts";
import { toGeneration, type GenerationRow } from "./generation-row.ts";

/**
 * The corrections table of the PostgreSQL state (postgres-schema.ts, migration 4), for
 * PostgresStore, which runs these inside its guards (unreachable database, retries of
 * reads). Its statement-level triggers move the change counter, and announce it, on
 * every change, so every server on the database reloads the corrections as it reloads keys.
 */

const COLUMNS = "cidr, fields, note, created_at, updated_at";

export async function listCorrections(sql: SQL): Promise<Correction[]> {
  return inAddressOrder((await sql.unsafe<CorrectionRow[]>(`SELECT ${COLUMNS} FROM corrections`)).map(toCorrection));
}

/** The corrections and the change counter, from one snapshot. */
export function correctionSnapshot(sql: SQL): Promise<CorrectionSnapshot> {
  return sql.begin("ISOLATION LEVEL REPEATABLE READ READ ONLY", async (tx) => {
    const [row] = await tx<GenerationRow[]>`SELECT value, store_id FROM generation WHERE id = 1`;
    const generation = toGeneration(row);
    return { generation, corrections: await listCorrections(tx) };
  });
}

/**
 * Sets a block's correction in one transaction, which `record` (given the correction and
 * the one it replaced) joins: see Audit in store.ts.
 */
export async function putCorrection(
  sql: SQL,
  cidr: string,
  fields: CorrectionFields,
  note: string | null,
  now: string,
  record: (tx: SQL, after: Correction, before: Correction | null) => Promise<void>,
): Promise<Correction> {
  const checked = checkCorrectionRow(cidr, fields, note);
  const values = [cidr, fieldsJson(checked), note, now];
  return sql.begin(async (tx) => {
    // Inserted, or else the row there (a writer that inserted it meanwhile has committed
    // by then: the insert waits for it) locked and updated. A SELECT … FOR UPDATE first
    // would lock nothing while the block has no row, and two first writes of one block
    // would both record a creation, the second over the first's correction.
    for (;;) {
      const [inserted] = await tx.unsafe<CorrectionRow[]>(
        `INSERT INTO corrections (${COLUMNS}) VALUES ($1, $2, $3, $4::timestamptz, $4::timestamptz) ON CONFLICT (cidr) DO NOTHING RETURNING ${COLUMNS}`,
        values,
      );
      if (inserted) {
        const after = toCorrection(inserted);
        await record(tx, after, null);
        return after;
      }
      const [old] = await tx.unsafe<CorrectionRow[]>(`SELECT ${COLUMNS} FROM corrections WHERE cidr = $1 FOR UPDATE`, [cidr]);
      // Removed since the insert met it: insert again.
      if (!old) continue;
      if (holdsAlready(old, values[1]!, note)) {
        const same = toCorrection(old);
        await record(tx, same, same);
        return same;
      }
      const [row] = await tx.unsafe<CorrectionRow[]>(`UPDATE corrections SET fields = $2, note = $3, updated_at = $4::timestamptz WHERE cidr = $1 RETURNING ${COLUMNS}`, values);
      const after = toCorrection(row!);
      await record(tx, after, toCorrection(old));
      return after;
    }
  });
}

/** Removes a block's correction in one transaction, which `record` (given the correction removed) joins. */
export async function removeCorrection(sql: SQL, cidr: string, record: (tx: SQL, removed: Correction) => Promise<void>): Promise<Correction | null> {
  return sql.begin(async (tx) => {
    const [row] = await tx.unsafe<CorrectionRow[]>(`DELETE FROM corrections WHERE cidr = $1 RETURNING ${COLUMNS}`, [cidr]);
    if (!row) return null;
    const removed = toCorrection(row);
    await record(tx, removed);
    return removed;
  });
}

/** Writes a snapshot's corrections (inside importState's transaction), in one statement. */
export async function insertCorrections(sql: SQL, corrections: readonly Correction[]): Promise<void> {
  if (corrections.length === 0) return;
  await sql`INSERT INTO corrections (cidr, fields, note, created_at, updated_at)
    SELECT c, f, n, ca::timestamptz, ua::timestamptz
    FROM unnest(${sql.array(corrections.map((c) => c.cidr), "TEXT")}, ${sql.array(corrections.map((c) => fieldsJson(c.fields)), "TEXT")},
                ${sql.array(corrections.map((c) => c.note), "TEXT")}, ${sql.array(corrections.map((c) => c.createdAt), "TEXT")},
                ${sql.array(corrections.map((c) => c.updatedAt), "TEXT")}) AS t(c, f, n, ca, ua)`;
}

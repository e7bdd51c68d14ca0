import type { SQL } from "bun";
import { USAGE_THRESHOLDS } from "../events/usage-thresholds.ts";
import { sqlstateOf } from "./postgres-unavailable.ts";
import type { Charge, ChargeOutcome } from "./store.ts";
import { DayTally, type DayRow } from "./usage-days.ts";

/**
 * The one-statement path of a PostgreSQL charge group. A group's transaction (BEGIN, lock
 * and read the units, decide, write, COMMIT) is four round trips, and the usage row stays
 * locked across three of them: with every server charging a busy key, the groups queue on
 * that lock, so a round trip held under it is a round trip lost for the whole fleet.
 *
 * Most groups need no decision one at a time: every charge of a key (in a period) fits
 * under its limit together, and no usage.threshold line lies between the units before and
 * after. Those keys are charged in one statement, committed on its own: the sum of their
 * charges is added to each usage row only where that holds against the row as locked
 * (`ON CONFLICT … DO UPDATE … WHERE`, evaluated on the latest committed units), and their
 * day rows are written in the same statement, only for the rows that were. A row the
 * statement leaves alone (the limit is near, a line would be crossed, or a charge is
 * special) is charged by the transaction, one charge at a time, as before. So the outcome
 * of every charge is the one the transaction would have given it; what is skipped is
 * only the round trips.
 *
 * Locks are taken in the transaction's order: usage rows by key and period, then day rows
 * by key and day, each day row only once its key's usage row is held. The statement's
 * connections wait a short while for a lock (QUICK_LOCK_WAIT_MS, postgres-store.ts);
 * past it, nothing is written and the transaction decides the whole group.
 */

/** One key and period of a group, as the statement charges it. */
export interface QuickRow {
  readonly keyId: string;
  readonly period: string;
  readonly limit: number | null;
  /** The units of all its charges. */
  total: number;
  /** Its charges' positions in the group, in order. */
  readonly charges: number[];
  readonly days: DayTally;
}

/** A group split: the rows the statement may try, and the charges it must leave to the transaction. */
export interface QuickPlan {
  readonly rows: QuickRow[];
  /** Positions in the group of the charges only the transaction can decide. */
  readonly rest: number[];
}

/** The statement's failures that leave its rows to the transaction (see chargeQuickRows). */
const LEFT_TO_THE_TRANSACTION = new Set(["55P03", "23503"]);

/** A key and period as one string. Unambiguous: a period is YYYY-MM (checked in charge()), so it holds no space. */
export function rowId(keyId: string, period: string): string {
  return `${keyId} ${period}`;
}

/**
 * Splits a group by key and period. A row is left to the transaction when one of its
 * charges is for no units or has lost its client (decided one at a time there), when
 * its charges disagree on the limit (a plan changed under the group), or when it is in
 * `refused` (rowId): a key whose last charge the transaction refused is at its limit,
 * and the statement would only leave it alone, a round trip spent for nothing.
 */
export function planQuickCharges(group: readonly Charge[], nowMs: () => number, refused: ReadonlySet<string> = new Set()): QuickPlan {
  const byRow = new Map<string, QuickRow | null>();
  const rest: number[] = [];
  group.forEach((charge, position) => {
    const id = rowId(charge.keyId, charge.period);
    let row = byRow.get(id);
    if (row === undefined && refused.has(id)) {
      row = null;
      byRow.set(id, null);
    }
    if (row === null) {
      rest.push(position);
      return;
    }
    if (row === undefined) {
      row = { keyId: charge.keyId, period: charge.period, limit: charge.limit, total: 0, charges: [], days: new DayTally() };
      byRow.set(id, row);
    }
    if (charge.units === 0 || charge.signal?.aborted || charge.limit !== row.limit) {
      rest.push(...row.charges, position);
      byRow.set(id, null);
      return;
    }
    row.total += charge.units;
    row.charges.push(position);
    row.days.add(charge.keyId, charge.units, charge.at ?? nowMs());
  });
  const rows = [...byRow.values()].filter((row): row is QuickRow => row !== null);
  rest.sort((a, b) => a - b);
  return { rows, rest };
}

/**
 * Runs the statement for `rows` of `group` (autocommit: it has committed when it answers) and
 * writes the outcome of every charge of a row it charged into `outcomes`. Returns the
 * positions of the charges of the rows it left alone.
 */
export async function chargeQuickRows(sql: SQL, group: readonly Charge[], rows: readonly QuickRow[], outcomes: ChargeOutcome[]): Promise<number[]> {
  let charged: ChargedRow[];
  try {
    charged = await chargeStatement(sql, rows);
  } catch (error) {
    // Nothing was written; the transaction decides every charge. 55P03,
    // lock_not_available: a row stayed locked past the pool's lock_timeout. 23503,
    // foreign_key_violation: a key is gone from the database (deleted behind the
    // servers' backs while their key caches still held it), which the transaction finds.
    if (LEFT_TO_THE_TRANSACTION.has(sqlstateOf(error) ?? "")) return rows.flatMap((row) => row.charges);
    throw error;
  }
  const after = new Map<string, number>();
  for (const row of charged) after.set(rowId(row.key_id, row.period), Number(row.used));
  const left: number[] = [];
  for (const row of rows) {
    const used = after.get(rowId(row.keyId, row.period));
    if (used === undefined) {
      left.push(...row.charges);
      continue;
    }
    // Each charge sees the units before it and its own, as if granted one at a time.
    let running = used - row.total;
    for (const position of row.charges) {
      running += group[position]!.units;
      outcomes[position] = { ok: true, used: running };
    }
  }
  return left;
}

interface ChargedRow {
  readonly key_id: string;
  readonly period: string;
  /** int8, as text. */
  readonly used: string;
}

/** The statement (see the file's comment): the usage rows it charged, with their units after. */
function chargeStatement(sql: SQL, rows: readonly QuickRow[]): Promise<ChargedRow[]> {
  if (rows.length === 1 && rows[0]!.days.size === 1) return chargeOneRow(sql, rows[0]!, rows[0]!.days.list()[0]!);
  const dayRows = rows.flatMap((row) => row.days.list().map((day) => ({ ...day, period: row.period })));
  const lines = sql.array([...USAGE_THRESHOLDS], "INT4");
  return sql<ChargedRow[]>`
    WITH wanted AS (
      SELECT * FROM unnest(${sql.array(rows.map((row) => row.keyId), "TEXT")}, ${sql.array(rows.map((row) => row.period), "TEXT")},
                           ${sql.array(rows.map((row) => row.total), "INT8")}, ${sql.array(rows.map((row) => row.limit), "INT8")}) AS w(k, p, total, lim)
    ),
    units AS (
      INSERT INTO usage AS u (key_id, period, used)
      SELECT k, p, total FROM wanted
      WHERE lim IS NULL OR (total <= lim AND NOT EXISTS (SELECT FROM unnest(${lines}) AS t(percent) WHERE total * 100 >= percent * lim))
      ORDER BY k COLLATE "C", p COLLATE "C"
      ON CONFLICT (key_id, period) DO UPDATE SET used = u.used + excluded.used
      WHERE (SELECT w.lim IS NULL OR (u.used + w.total <= w.lim AND NOT EXISTS (
               SELECT FROM unnest(${lines}) AS t(percent)
               WHERE u.used * 100 < percent * w.lim AND (u.used + w.total) * 100 >= percent * w.lim))
             FROM wanted w WHERE w.k = u.key_id AND w.p = u.period)
      RETURNING u.key_id, u.period, u.used
    ),
    days AS (
      INSERT INTO usage_days (key_id, day, requests, units, last_used_at)
      SELECT t.k, t.d::date, t.r, t.n, t.l::timestamptz
      FROM unnest(${sql.array(dayRows.map((row) => row.keyId), "TEXT")}, ${sql.array(dayRows.map((row) => row.period), "TEXT")}, ${sql.array(dayRows.map((row) => row.day), "TEXT")},
                  ${sql.array(dayRows.map((row) => row.requests), "INT8")}, ${sql.array(dayRows.map((row) => row.units), "INT8")},
                  ${sql.array(dayRows.map((row) => row.lastUsedAt), "TEXT")}) AS t(k, p, d, r, n, l)
      JOIN units ON units.key_id = t.k AND units.period = t.p
      ORDER BY t.k COLLATE "C", t.d
      ON CONFLICT (key_id, day) DO UPDATE SET requests = usage_days.requests + excluded.requests, units = usage_days.units + excluded.units,
        last_used_at = greatest(usage_days.last_used_at, excluded.last_used_at)
    )
    SELECT key_id, period, used FROM units`;
}

/**
 * The same statement for a group of one key on one day (a busy client's: every charge of
 * a turn on its key), its values given as plain parameters rather than arrays unnested
 * and joined: the same checks and rows, in the same order, for about a fifth less of
 * the database's CPU a group and of its time (measured in sequence on one connection:
 * 125–140 µs of the backend's CPU against 172–177, 244–261 µs a statement against
 * 310–325).
 */
function chargeOneRow(sql: SQL, row: QuickRow, day: DayRow): Promise<ChargedRow[]> {
  const lines = sql.array([...USAGE_THRESHOLDS], "INT4");
  const limit = row.limit;
  return sql<ChargedRow[]>`
    WITH units AS (
      INSERT INTO usage AS u (key_id, period, used)
      SELECT ${row.keyId}, ${row.period}, ${row.total}::int8
      WHERE ${limit}::int8 IS NULL OR (${row.total}::int8 <= ${limit}::int8
        AND NOT EXISTS (SELECT FROM unnest(${lines}) AS t(percent) WHERE ${row.total}::int8 * 100 >= percent * ${limit}::int8))
      ON CONFLICT (key_id, period) DO UPDATE SET used = u.used + excluded.used
      WHERE ${limit}::int8 IS NULL OR (u.used + excluded.used <= ${limit}::int8 AND NOT EXISTS (
        SELECT FROM unnest(${lines}) AS t(percent)
        WHERE u.used * 100 < percent * ${limit}::int8 AND (u.used + excluded.used) * 100 >= percent * ${limit}::int8))
      RETURNING u.key_id, u.period, u.used
    ),
    days AS (
      INSERT INTO usage_days (key_id, day, requests, units, last_used_at)
      SELECT key_id, ${day.day}::date, ${day.requests}::int8, ${day.units}::int8, ${day.lastUsedAt}::timestamptz FROM units
      ON CONFLICT (key_id, day) DO UPDATE SET requests = usage_days.requests + excluded.requests, units = usage_days.units + excluded.units,
        last_used_at = greatest(usage_days.last_used_at, excluded.last_used_at)
    )
    SELECT key_id, period, used FROM units`;
}

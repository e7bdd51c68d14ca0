/**
 * Use per key per UTC day: the rows a group of charges adds, and the `YYYY-MM-DD` days
 * they are kept under. Both stores write these rows in the transaction that commits the
 * units, so the days never disagree with the units charged.
 */

const DAY_MS = 86_400_000;

/** One key's use on one day, as a group of charges adds it. */
export interface DayRow {
  readonly keyId: string;
  /** `YYYY-MM-DD`. */
  readonly day: string;
  readonly requests: number;
  readonly units: number;
  /** ISO 8601 UTC of the latest request among them. */
  readonly lastUsedAt: string;
}

/** Adds up a group's granted charges by key and day: one row each, however many charges. */
export class DayTally {
  private readonly rows = new Map<string, { keyId: string; dayNumber: number; requests: number; units: number; lastMs: number }>();

  /** A granted charge of `units` (at least 1) answered at `atMs`. */
  add(keyId: string, units: number, atMs: number): void {
    const dayNumber = Math.floor(atMs / DAY_MS);
    // Unambiguous: a day number holds no space.
    const id = `${keyId} ${dayNumber}`;
    const row = this.rows.get(id);
    if (row) {
      row.requests += 1;
      row.units += units;
      if (atMs > row.lastMs) row.lastMs = atMs;
    } else {
      this.rows.set(id, { keyId, dayNumber, requests: 1, units, lastMs: atMs });
    }
  }

  get size(): number {
    return this.rows.size;
  }

  /** The rows, ordered by key and day (the order in which a database locks them). */
  list(): DayRow[] {
    return [...this.rows.values()]
      .sort((a, b) => (a.keyId < b.keyId ? -1 : a.keyId > b.keyId ? 1 : a.dayNumber - b.dayNumber))
      .map((row) => ({ keyId: row.keyId, day: dayOf(row.dayNumber * DAY_MS), requests: row.requests, units: row.units, lastUsedAt: new Date(row.lastMs).toISOString() }));
  }
}

/** The UTC day of an instant, `YYYY-MM-DD`. */
export function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** The first day isDayId accepts: the earliest a span of days can start. */
export const FIRST_DAY = "0001-01-01";

/** Whether `text` is a real calendar day written `YYYY-MM-DD` (years 0001 to 9999). */
export function isDayId(text: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return false;
  const ms = Date.parse(`${text}T00:00:00Z`);
  return !Number.isNaN(ms) && dayOf(ms) === text && text >= FIRST_DAY;
}

/** The day `count` days after `day` (before, for a negative count). */
export function addDays(day: string, count: number): string {
  return dayOf(Date.parse(`${day}T00:00:00Z`) + count * DAY_MS);
}

/**
 * The first day of the `count` days that end on `to` (both included): the default start
 * of a span given only its end. Never before FIRST_DAY, so the span is shorter near it:
 * a day before it is one no store or query accepts (PostgreSQL refuses year 0 outright).
 */
export function spanStart(to: string, count: number): string {
  const from = addDays(to, 1 - count);
  return daysBetween(FIRST_DAY, from) < 1 ? FIRST_DAY : from;
}

/** Days from `from` to `to`, both included (0 when `to` is before `from`). */
export function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS) + 1;
}

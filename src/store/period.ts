/** A billing period: the calendar month in UTC. */
export interface BillingPeriod {
  /** `YYYY-MM`, the key of the period's usage row. */
  readonly id: string;
  /** The first instant of the month. */
  readonly start: Date;
  /** The first instant of the next month (exclusive). */
  readonly end: Date;
}

/** The billing period (UTC calendar month) that contains `now`. */
export function billingPeriod(now: Date): BillingPeriod {
  if (Number.isNaN(now.getTime())) throw new RangeError("billingPeriod needs a valid date");
  const year = now.getUTCFullYear();
  const month = now.getUTCMonth();
  return {
    id: `${String(year).padStart(4, "0")}-${String(month + 1).padStart(2, "0")}`,
    start: monthStart(year, month),
    end: monthStart(year, month + 1),
  };
}

/**
 * A period's start or end as the contract writes it (§4): RFC 3339 in UTC, whole seconds
 * (`2026-12-01T00:00:00Z`). Every answer that names one, /v1/usage and quota_exceeded,
 * writes it with this, so a client comparing them sees one text. A bound is midnight:
 * the milliseconds left out are always zero.
 */
export function periodTime(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** Midnight UTC on the first of a month; `month` 12 is January of the next year. */
function monthStart(year: number, month: number): Date {
  // setUTCFullYear, unlike Date.UTC, does not read years 0 to 99 as 1900 to 1999.
  const date = new Date(0);
  date.setUTCFullYear(year, month, 1);
  return date;
}

/** Whether `id` has the form of a billing period id, `YYYY-MM`. */
export function isPeriodId(id: string): boolean {
  return /^\d{4}-(0[1-9]|1[0-2])$/.test(id);
}

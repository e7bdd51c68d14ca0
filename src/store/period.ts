/** A billing period: the calendar month in UTC. `end` is the next month's start. */
export interface BillingPeriod {
  readonly id: string;
  readonly start: Date;
  readonly end: Date;
}

export function billingPeriod(now: Date): BillingPeriod {
  const year = now.getUTCFullYear();
  const month = now.getUTCMonth();
  return {
    id: `${year}-${String(month + 1).padStart(2, "0")}`,
    start: new Date(Date.UTC(year, month, 1)),
    end: new Date(Date.UTC(year, month + 1, 1)),
  };
}

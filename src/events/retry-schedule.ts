/**
 * When a failed delivery is tried again (CONTRACT §16): exponential backoff, the first
 * retry 30 seconds after the first attempt, then doubling (1, 2, 4, … minutes) up to 4
 * hours between tries, until 24 hours have passed since the event; a last attempt is
 * made at that 24-hour mark, and a delivery that fails then is given up ("failed"). So a
 * receiver that is away for a day still gets every event (at least once), and one that
 * answers 500 is tried about 15 times in all.
 *
 * Times are wall-clock milliseconds: the schedule lives in the state store and is shared
 * by every server of a fleet, so it cannot be on one process's monotonic clock. A clock
 * step only moves the next try earlier or later.
 */
export const FIRST_RETRY_MS = 30_000;
export const LONGEST_WAIT_MS = 4 * 3_600_000;
export const RETRY_FOR_MS = 24 * 3_600_000;

/** The wait after failed attempt number `attempt` (1 = the first). */
export function retryDelayMs(attempt: number): number {
  return Math.min(LONGEST_WAIT_MS, FIRST_RETRY_MS * 2 ** Math.max(0, attempt - 1));
}

/**
 * When to try a delivery again after its attempt `attempt` failed at `nowMs`, for an
 * event created at `createdMs`; null when it is to be given up.
 */
export function nextAttemptAt(attempt: number, nowMs: number, createdMs: number): number | null {
  const deadline = createdMs + RETRY_FOR_MS;
  if (nowMs >= deadline) return null;
  return Math.min(nowMs + retryDelayMs(attempt), deadline);
}

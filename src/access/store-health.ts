/**
 * Whether a serving thread's state store can be reached right now, as its own calls find
 * it: the key cache's poll (every 250 ms) says reachable or not, and a lease of
 * rate-limit tokens that fails with StoreUnavailableError says not. (A charge that times
 * out does not: on SQLite that is a state file locked by a backup, which leaves the
 * server ready, CONTRACT §12.) /readyz answers 503 while it is not,
 * and on a store that several servers share (PostgreSQL) /v1 requests answer 503
 * store_unavailable at once rather than queue for a database that is away (see
 * LeaseLimiter). Nothing else clears it than a successful poll, so recovery needs no
 * request to try its luck: the poll finds the database back within a quarter second.
 */
export class StoreHealth {
  private up = true;

  /** @param onChange called on each change, with the error that made the store unreachable. */
  constructor(private readonly onChange: (reachable: boolean, error?: unknown) => void = () => {}) {}

  get reachable(): boolean {
    return this.up;
  }

  markReachable(): void {
    if (this.up) return;
    this.up = true;
    this.onChange(true);
  }

  markUnreachable(error: unknown): void {
    if (!this.up) return;
    this.up = false;
    this.onChange(false, error);
  }
}

/**
 * Per-key request rate limits: a token bucket per key that holds one second's worth of
 * requests (the burst) and refills continuously at the plan's rate.
 *
 * The buckets live in this process's memory; with several server processes each one
 * enforces the limit on the requests it receives.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  /**
   * @param maxBuckets bounds memory when ids are chosen by clients (peer addresses):
   *   past it, buckets idle for over a second (full again, so forgetting them changes
   *   nothing) are dropped, and if none are, the oldest half.
   */
  constructor(
    private readonly nowMs: () => number,
    private readonly maxBuckets = 100_000,
  ) {}

  /**
   * Takes one request's token. Returns 0 when the request may go ahead, otherwise the
   * whole seconds to wait before a token is free (for `Retry-After`).
   */
  take(keyId: string, perSecond: number | null): number {
    if (perSecond === null) return 0;
    const now = this.nowMs();
    const bucket = this.buckets.get(keyId);
    if (!bucket) {
      if (this.buckets.size >= this.maxBuckets) this.prune(now);
      this.buckets.set(keyId, { tokens: perSecond - 1, at: now });
      return 0;
    }
    // A plan change can lower the rate below the tokens saved: cap at the new burst.
    bucket.tokens = Math.min(perSecond, bucket.tokens + ((now - bucket.at) / 1000) * perSecond);
    bucket.at = now;
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / perSecond));
  }

  private prune(now: number): void {
    for (const [id, bucket] of this.buckets) if (now - bucket.at > 1000) this.buckets.delete(id);
    if (this.buckets.size < this.maxBuckets) return;
    let drop = this.buckets.size >> 1;
    for (const id of this.buckets.keys()) {
      if (drop-- <= 0) break;
      this.buckets.delete(id);
    }
  }
}

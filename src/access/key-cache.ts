import { sameGeneration, type ActiveKey, type AuthSnapshot, type Generation, type Store } from "../store/store.ts";
import { hashSecret } from "../store/secret.ts";

/**
 * Every active key in memory, so a request checks its key without touching the store.
 *
 * Invariant: the cache is at most a poll behind the store. The server polls the store's
 * change counter (serve/store-changes.ts), which any process (the CLI included) bumps
 * when it changes a key or a plan, and the cache reloads the whole snapshot when the
 * counter moved, or is another store's (see Generation); so a revoked or rotated key, or
 * a changed plan, takes effect within a second without a restart. A secret the cache
 * does not know is looked up in the store itself (`lookUp`), so a key created a moment
 * ago works on its very first request.
 */
export class KeyCache {
  private snapshot: AuthSnapshot;
  /** Secrets already seen to be valid, so a request hashes a secret once per snapshot. */
  private bySecret = new Map<string, ActiveKey>();
  private refreshing = false;
  /** Whether the snapshot must be reloaded whatever the change counter says (see keyGone). */
  private stale = false;
  /** Lookups in the store in flight, by secret. */
  private readonly lookups = new Map<string, Promise<ActiveKey | null>>();

  private constructor(
    private readonly store: Store,
    snapshot: AuthSnapshot,
  ) {
    this.snapshot = snapshot;
  }

  static async load(store: Store): Promise<KeyCache> {
    return new KeyCache(store, await store.authSnapshot());
  }

  /** The active key whose secret this is, or null. */
  authenticate(secret: string): ActiveKey | null {
    const known = this.bySecret.get(secret);
    if (known) return known;
    const active = this.snapshot.keysByHash.get(hashSecret(secret)) ?? null;
    if (active) this.bySecret.set(secret, active);
    return active;
  }

  /**
   * Looks a secret the cache does not know up in the store, and keeps the key found. The
   * caller bounds how often this may happen (the gate's throttle of failed keys per peer).
   * Requests that bring the same secret while it is being looked up share that one read
   * (a client's first requests with a new key, on many connections at once).
   */
  lookUp(secret: string): Promise<ActiveKey | null> {
    let pending = this.lookups.get(secret);
    if (!pending) {
      const cache = this.bySecret;
      pending = this.store.findActiveKey(hashSecret(secret)).then((active) => {
        // A snapshot loaded meanwhile started a new cache: what was read before it may be
        // stale (revoked since), and the new snapshot has the key if it is still active.
        if (active && cache === this.bySecret) cache.set(secret, active);
        return active;
      });
      this.lookups.set(secret, pending);
      const done = () => this.lookups.delete(secret);
      pending.then(done, done);
    }
    return pending;
  }

  /** Whether this secret is being looked up in the store now (see lookUp). */
  isLookingUp(secret: string): boolean {
    return this.lookups.has(secret);
  }

  /** How many active keys there are. */
  get size(): number {
    return this.snapshot.keysByHash.size;
  }

  /**
   * Reloads the snapshot if the store changed since the last load: since `generation`,
   * the change counter as just read (serve/store-changes.ts polls it), or as read here,
   * moved, or is another store's (a database made again); or if a key it holds was found
   * gone (keyGone).
   */
  async refresh(generation?: Generation): Promise<void> {
    if (this.refreshing) return;
    this.refreshing = true;
    try {
      if (!this.stale && sameGeneration(generation ?? (await this.store.generation()), this.snapshot.generation)) return;
      // Cleared before the read: a key found gone while it reads makes the next refresh reload again.
      const stale = this.stale;
      this.stale = false;
      try {
        this.snapshot = await this.store.authSnapshot();
      } catch (error) {
        this.stale ||= stale;
        throw error;
      }
      this.bySecret = new Map();
    } finally {
      this.refreshing = false;
    }
  }

  /**
   * A charge found a key of this cache gone from the store (deleted behind the servers'
   * backs, faster than a poll): the snapshot is reloaded at once, whatever the change
   * counter says; if a reload is under way already, or this one fails, on the next poll.
   * A failed reload is the poll's to report.
   */
  keyGone(): void {
    this.stale = true;
    this.refresh().catch(() => {});
  }
}

import { StoreUnavailableError, type TokenLease } from "../store/store.ts";
import { monotonicMs } from "./monotonic-clock.ts";
import type { StoreHealth } from "./store-health.ts";

/**
 * How long leased tokens may be spent, counted from the moment the lease was asked for
 * (so never later than this after the database took them). This alone bounds a key's
 * rate across servers, whatever their number, threads or slice sizes: see LeaseLimiter.
 */
export const LEASE_LIFETIME_MS = 400;
/** How long a request may wait for leased tokens before it answers 503 store_unavailable. */
export const LEASE_WAIT_MS = 1000;
/** Requests of one thread waiting for leases, all keys together; past that, 503 at once. */
const MAX_WAITING = 10_000;
/** Keys held before the idle ones are swept out (their tokens have expired: nothing is lost). */
const SWEEP_AT = 10_000;

/** Store.leaseTokens. */
export type LeaseTokens = (keyId: string, ratePerSecond: number, wanted: number) => Promise<TokenLease>;

interface Waiter {
  readonly resolve: (wait: number) => void;
  readonly reject: (error: unknown) => void;
  readonly timer: ReturnType<typeof setTimeout>;
}

/** One key's tokens in this thread. */
class Holding {
  /** Whole tokens in hand, spendable until expiresAt. */
  tokens = 0;
  /** When the slice in hand expires (monotonic ms); 0 once it has been judged used or expired. */
  expiresAt = 0;
  /** The shared bucket was found dry: no lease before this (monotonic ms). */
  emptyUntil = 0;
  /** Tokens asked for beyond the requests waiting: grows while slices are used up, shrinks when they expire unspent. */
  prefetch = 0;
  /** A lease is scheduled or in flight (at most one a key). */
  leasing = false;
  readonly waiters: Waiter[] = [];
}

/**
 * A key's rate limit across every server on one shared store (CONTRACT §9), for one
 * serving thread. The key's token bucket lives in the store (Store.leaseTokens: one
 * second's worth, refilled at the plan's rate, one row for all servers); a thread takes
 * small slices of it and spends them on its requests without asking the store again.
 *
 * The bound. Tokens leased are spent within LEASE_LIFETIME_MS (T) of being taken from
 * the bucket, or never. So the requests let through in any window [t, t + w] spent
 * tokens taken in (t − T, t + w], and a bucket of capacity r (the burst) refilled at r a
 * second gives up at most r + r·(w + T) tokens over w + T seconds. Over 5 seconds: at
 * most r·(6 + T) = 6.4·r, within CONTRACT §9's 5·r·1.1 + r = 6.5·r, for any number of
 * servers and threads. Tokens that expire unspent are lost to the key (it gets less than
 * its rate, never more), so slices are kept small: the requests waiting, plus a prefetch
 * that doubles while slices are used up before they expire and shrinks by what expired
 * unspent, at most what the thread could spend in T at the whole rate.
 *
 * The request path: a request with a token in hand goes on at once (`take` returns 0).
 * Otherwise it waits for a lease, one in flight per key, which asks for every request
 * waiting then; requests that arrive meanwhile are served from what it brings, or by the
 * next. A lease that finds the bucket dry refuses its waiters with 429 and the key asks
 * no more until a token has refilled, so a key over its rate costs the store at most
 * its rate in leases a thread. Waits are bounded: LEASE_WAIT_MS a request, at most a
 * burst of waiters a key and MAX_WAITING a thread; a lease that fails or is too slow
 * answers 503 store_unavailable, and while the store is known to be away (StoreHealth:
 * a lease refused as unavailable says so, one that ran out of time does not) every /v1
 * request answers 503 at once: never a request let through unlimited.
 */
export class LeaseLimiter {
  private readonly holdings = new Map<string, Holding>();
  private waiting = 0;

  constructor(
    private readonly lease: LeaseTokens,
    private readonly health: StoreHealth,
    private readonly nowMs: () => number = monotonicMs,
  ) {}

  /**
   * Takes a token of the key's rate for one request: 0 when it may go on, a number of
   * seconds to wait (for Retry-After) when the key is over its rate, or a promise of one
   * of these once a lease has answered. Throws (or rejects with) StoreUnavailableError
   * when the store cannot be reached, for every key, rate-limited or not.
   */
  take(keyId: string, perSecond: number | null): number | Promise<number> {
    if (!this.health.reachable) throw new StoreUnavailableError("the state store cannot be reached");
    if (perSecond === null) return 0;
    const now = this.nowMs();
    let holding = this.holdings.get(keyId);
    if (!holding) {
      if (this.holdings.size >= SWEEP_AT) this.sweep(now);
      holding = new Holding();
      this.holdings.set(keyId, holding);
    }
    if (holding.tokens >= 1) {
      if (now < holding.expiresAt) {
        holding.tokens--;
        return 0;
      }
      holding.prefetch = Math.max(0, holding.prefetch - Math.floor(holding.tokens));
      holding.tokens = 0;
      holding.expiresAt = 0;
    } else if (now < holding.expiresAt) {
      holding.prefetch = Math.min(maxPrefetch(perSecond), Math.max(1, holding.prefetch * 2));
      holding.expiresAt = 0;
    }
    if (now < holding.emptyUntil) return wholeSeconds(holding.emptyUntil - now);
    // More waiting than the bucket can ever hold: the rest would be refused anyway.
    if (holding.waiters.length >= burst(perSecond)) return wholeSeconds(1000 / perSecond);
    if (this.waiting >= MAX_WAITING) throw new StoreUnavailableError(`${MAX_WAITING} requests are waiting for the state store to lease rate-limit tokens`);
    const entry = holding;
    return new Promise<number>((resolve, reject) => {
      const waiter: Waiter = {
        resolve,
        reject,
        timer: setTimeout(() => {
          const at = entry.waiters.indexOf(waiter);
          if (at < 0) return;
          entry.waiters.splice(at, 1);
          this.waiting--;
          reject(new StoreUnavailableError(`the state store did not lease rate-limit tokens within ${LEASE_WAIT_MS} ms`));
        }, LEASE_WAIT_MS),
      };
      entry.waiters.push(waiter);
      this.waiting++;
      this.schedule(keyId, entry, perSecond);
    });
  }

  /** Requests waiting for leases now (for tests). */
  get waitingCount(): number {
    return this.waiting;
  }

  /**
   * Asks for a lease on the next turn of the event loop, so that the requests read from
   * the sockets in this turn go in one lease.
   */
  private schedule(keyId: string, holding: Holding, perSecond: number): void {
    if (holding.leasing) return;
    holding.leasing = true;
    setImmediate(() => this.send(keyId, holding, perSecond));
  }

  private send(keyId: string, holding: Holding, perSecond: number): void {
    if (holding.waiters.length === 0) {
      holding.leasing = false;
      return;
    }
    const wanted = Math.min(burst(perSecond), holding.waiters.length + holding.prefetch);
    const sentAt = this.nowMs();
    const startedAt = performance.now();
    let leased: Promise<TokenLease>;
    try {
      leased = this.lease(keyId, perSecond, wanted);
    } catch (error) {
      leased = Promise.reject(error);
    }
    leased.then(
      (lease) => {
        this.health.wrote(startedAt);
        this.received(keyId, holding, perSecond, wanted, sentAt, lease);
      },
      (error: unknown) => {
        holding.leasing = false;
        // A lease is a write: refused, the store is away or takes no writes (every
        // request answers 503 until a write succeeds); a lease that ran out of time (a
        // bucket locked) fails its own requests only. See StoreHealth.
        this.health.writeFailed(error);
        for (const waiter of this.release(holding, holding.waiters.length)) waiter.reject(error);
      },
    );
  }

  private received(keyId: string, holding: Holding, perSecond: number, wanted: number, sentAt: number, lease: TokenLease): void {
    holding.leasing = false;
    const now = this.nowMs();
    if (now - sentAt >= LEASE_LIFETIME_MS) {
      // Too late to spend: tokens taken that long ago would stretch the bound. The key
      // loses them; the requests waiting ask again, within their own time.
      if (holding.waiters.length > 0) this.schedule(keyId, holding, perSecond);
      return;
    }
    holding.tokens = lease.granted;
    holding.expiresAt = sentAt + LEASE_LIFETIME_MS;
    // The shared bucket is dry: no lease for this key before a token has refilled (the
    // tokens in hand are spent first).
    const refill = (Math.max(0, 1 - lease.available) / perSecond) * 1000;
    if (lease.available < 1) holding.emptyUntil = now + refill;
    const served = Math.min(holding.tokens, holding.waiters.length);
    holding.tokens -= served;
    for (const waiter of this.release(holding, served)) waiter.resolve(0);
    if (holding.waiters.length === 0) return;
    if (lease.granted < wanted) {
      // The key is over its rate on all servers together.
      const wait = wholeSeconds(refill);
      for (const waiter of this.release(holding, holding.waiters.length)) waiter.resolve(wait);
    } else {
      // More requests came while the lease was in flight than it asked for.
      this.schedule(keyId, holding, perSecond);
    }
  }

  /** Takes the first `count` waiters off the key's queue. */
  private release(holding: Holding, count: number): Waiter[] {
    const released = holding.waiters.splice(0, count);
    for (const waiter of released) clearTimeout(waiter.timer);
    this.waiting -= released.length;
    return released;
  }

  private sweep(now: number): void {
    for (const [keyId, holding] of this.holdings) {
      if (!holding.leasing && holding.waiters.length === 0 && (holding.tokens < 1 || now >= holding.expiresAt) && now >= holding.emptyUntil) this.holdings.delete(keyId);
    }
  }
}

/** The bucket's capacity, one second's worth, in whole tokens (a plan's rate is a whole number). */
function burst(perSecond: number): number {
  return Math.max(1, Math.floor(perSecond));
}

/** The most a thread could spend in a lease's lifetime at the key's whole rate. */
function maxPrefetch(perSecond: number): number {
  return Math.max(1, Math.ceil((perSecond * LEASE_LIFETIME_MS) / 1000));
}

/** Retry-After: whole seconds, at least one. */
function wholeSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}

import { monotonicMs } from "./monotonic-clock.ts";

/**
 * Request rate limits: a token bucket per id (a key id, or a peer address for failed key
 * attempts) that holds one second's worth of requests (the burst) and refills
 * continuously at the plan's rate.
 *
 * The buckets live in a SharedArrayBuffer, so every worker thread of a server that is
 * handed the same table (see `table` and `RateLimiter.over`) spends from the same
 * buckets: a key's limit holds for the whole server, whichever thread or connection its
 * requests come in on.
 *
 * Layout: `capacity` slots (a power of two), each four int32 words [id hash high, id
 * hash low, lock, unused] and two float64 [tokens, time of last update in ms]. An id
 * lives in one of the PROBE slots from its hash's home slot; hash high is never 0, which
 * marks a free slot. A slot's lock (compare-and-swap 0 → 1) guards its bucket and any
 * change of the id it holds; critical sections are a few arithmetic operations.
 *
 * Memory is fixed by the capacity. When every slot an id may use is taken, the slot
 * idle longest is given to it: a bucket idle for a second or more is full again, so
 * forgetting it changes nothing; only with more than PROBE busy ids on one home slot
 * does a forgotten one start again from a full bucket.
 */
export class RateLimiter {
  private readonly words: Int32Array;
  private readonly numbers: Float64Array;
  private readonly mask: number;

  /**
   * @param nowMs a monotonic clock in milliseconds, comparable across the threads that
   *   share the table (see `monotonicMs`), so a step of the wall clock changes nothing
   * @param table the buckets: a capacity (ids it holds at least; rounded up to a power
   *   of two) for a new table, or the `table` of another RateLimiter to share its buckets
   */
  constructor(
    private readonly nowMs: () => number = monotonicMs,
    table: number | SharedArrayBuffer = 100_000,
  ) {
    const buffer = typeof table === "number" ? newTable(table) : table;
    const slots = buffer.byteLength / SLOT_BYTES;
    this.words = new Int32Array(buffer, 0, slots * 4);
    this.numbers = new Float64Array(buffer, slots * 16, slots * 2);
    this.mask = slots - 1;
  }

  /** The shared buckets, to hand to a RateLimiter in another thread. */
  get table(): SharedArrayBuffer {
    return this.words.buffer as SharedArrayBuffer;
  }

  /**
   * Takes one request's token. Returns 0 when the request may go ahead, otherwise the
   * whole seconds to wait before a token is free (for `Retry-After`).
   */
  take(id: string, perSecond: number | null): number {
    if (perSecond === null) return 0;
    const high = hashHigh(id);
    const low = hashLow(id);
    const now = this.nowMs();
    for (;;) {
      const slot = this.claim(high, low, now);
      if (slot < 0) continue; // lost a race for the slot: look again
      const tokenAt = slot * 2;
      let tokens = this.numbers[tokenAt] as number;
      if (Number.isNaN(tokens)) {
        tokens = perSecond;
      } else {
        // Threads read the clock a little apart: an update never goes back in time.
        const elapsed = Math.max(0, now - (this.numbers[tokenAt + 1] as number));
        // A plan change can lower the rate below the tokens saved: cap at the new burst.
        tokens = Math.min(perSecond, tokens + (elapsed / 1000) * perSecond);
      }
      let wait = 0;
      if (tokens >= 1) tokens -= 1;
      else wait = Math.max(1, Math.ceil((1 - tokens) / perSecond));
      this.numbers[tokenAt] = tokens;
      this.numbers[tokenAt + 1] = Math.max(now, this.numbers[tokenAt + 1] as number);
      this.unlock(slot);
      return wait;
    }
  }

  /**
   * Finds the id's slot, or gives it one, and returns it locked; -1 when the slot changed
   * hands before the lock was taken. A slot given to a new id has NaN tokens.
   */
  private claim(high: number, low: number, now: number): number {
    const words = this.words;
    const home = low & this.mask;
    let free = -1;
    let idlest = -1;
    let idlestHigh = 0;
    let idlestAt = Infinity;
    for (let i = 0; i < PROBE; i++) {
      const slot = (home + i) & this.mask;
      const slotHigh = Atomics.load(words, slot * 4);
      if (slotHigh === high && Atomics.load(words, slot * 4 + 1) === low) {
        this.lock(slot);
        if (words[slot * 4] === high && words[slot * 4 + 1] === low) return slot;
        this.unlock(slot);
        return -1;
      }
      if (slotHigh === 0) {
        if (free < 0) free = slot;
      } else if ((this.numbers[slot * 2 + 1] as number) < idlestAt) {
        idlestAt = this.numbers[slot * 2 + 1] as number;
        idlestHigh = slotHigh;
        idlest = slot;
      }
    }
    // The id has no slot: take the first free one, else the one idle longest, if it is
    // still as it was seen once locked.
    const slot = free >= 0 ? free : idlest;
    const expectedHigh = free >= 0 ? 0 : idlestHigh;
    this.lock(slot);
    if (words[slot * 4] !== expectedHigh || (free < 0 && this.numbers[slot * 2 + 1] !== idlestAt)) {
      this.unlock(slot);
      return -1;
    }
    words[slot * 4 + 1] = low;
    this.numbers[slot * 2] = Number.NaN;
    this.numbers[slot * 2 + 1] = now;
    Atomics.store(words, slot * 4, high);
    return slot;
  }

  private lock(slot: number): void {
    while (Atomics.compareExchange(this.words, slot * 4 + 2, 0, 1) !== 0);
  }

  private unlock(slot: number): void {
    Atomics.store(this.words, slot * 4 + 2, 0);
  }
}

/** Slots an id may use, from its home slot on. */
const PROBE = 16;
const SLOT_BYTES = 32;

function newTable(ids: number): SharedArrayBuffer {
  let slots = 1024;
  while (slots < ids) slots *= 2;
  return new SharedArrayBuffer(slots * SLOT_BYTES);
}

/** FNV-1a over the UTF-16 code units, with 0 mapped away (0 marks a free slot). */
function hashHigh(id: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) hash = Math.imul(hash ^ id.charCodeAt(i), 0x01000193);
  return hash === 0 ? 1 : hash;
}

/** A second, independent hash (murmur-style mixing), for the home slot and the id check. */
function hashLow(id: string): number {
  let hash = 0x9747b28c ^ id.length;
  for (let i = 0; i < id.length; i++) {
    hash = Math.imul(hash ^ id.charCodeAt(i), 0x5bd1e995);
    hash ^= hash >>> 15;
  }
  return Math.imul(hash ^ (hash >>> 13), 0xc2b2ae35) ^ (hash >>> 16);
}

/**
 * Binary search over sorted address starts packed in a Uint32Array: one word per IPv4
 * address, or four words (most significant first) per IPv6 address. The range index,
 * the special-purpose table and the corrections answer "the last start ≤ address" with
 * these, and the range index and the corrections how large a block around the address
 * stays in its segment; the first start must be 0, so there always is one.
 */

/**
 * Index of the last start ≤ value among IPv4 starts; with `low` and `high`, among those
 * indexes only (the caller knows the answer lies there).
 */
export function lastStartAtOrBelow32(starts: Uint32Array, value: number, low = 0, high = starts.length - 1): number {
  while (low < high) {
    const mid = (low + high + 1) >>> 1;
    if ((starts[mid] as number) <= value) low = mid;
    else high = mid - 1;
  }
  return low;
}

/** Index (in addresses, not words) of the last start ≤ words among IPv6 starts; `low`/`high` as above. */
export function lastStartAtOrBelow128(starts: Uint32Array, words: readonly number[], low = 0, high = starts.length / 4 - 1): number {
  while (low < high) {
    const mid = (low + high + 1) >>> 1;
    if (compareAt(starts, mid * 4, words) <= 0) low = mid;
    else high = mid - 1;
  }
  return low;
}

function compareAt(starts: Uint32Array, offset: number, words: readonly number[]): number {
  for (let w = 0; w < 4; w++) {
    const a = starts[offset + w] as number;
    const b = words[w] as number;
    if (a !== b) return a < b ? -1 : 1;
  }
  return 0;
}

/**
 * The prefix of the largest CIDR block around `value` that stays inside its segment, the
 * addresses from start `i` up to the next start (all of them for the last segment): the
 * block may reach neither below the segment's start nor the next start, so its prefix
 * must be longer than the address's common prefix with the neighbour outside on either
 * side. 0 when the segment is the whole space.
 */
export function segmentPrefix32(starts: Uint32Array, i: number, value: number): number {
  const start = starts[i] as number;
  let prefix = 0;
  if (start > 0) prefix = Math.max(prefix, commonPrefix32(value, start - 1) + 1);
  if (i + 1 < starts.length) prefix = Math.max(prefix, commonPrefix32(value, starts[i + 1] as number) + 1);
  return prefix;
}

/** segmentPrefix32 for IPv6 starts; `i` counts addresses, not words. */
export function segmentPrefix128(starts: Uint32Array, i: number, words: readonly number[]): number {
  const offset = i * 4;
  let prefix = 0;
  if (!isZeroAt(starts, offset)) prefix = Math.max(prefix, commonPrefix128(words, minusOneAt(starts, offset), 0) + 1);
  if (offset + 4 < starts.length) prefix = Math.max(prefix, commonPrefix128(words, starts, offset + 4) + 1);
  return prefix;
}

/**
 * segmentPrefix32 for a run of neighbouring segments, `first` to `last`: the prefix of
 * the largest block around `value` that reaches neither below start `first` nor the
 * start after `last`.
 */
export function runPrefix32(starts: Uint32Array, first: number, last: number, value: number): number {
  const start = starts[first] as number;
  let prefix = 0;
  if (start > 0) prefix = Math.max(prefix, commonPrefix32(value, start - 1) + 1);
  if (last + 1 < starts.length) prefix = Math.max(prefix, commonPrefix32(value, starts[last + 1] as number) + 1);
  return prefix;
}

/** runPrefix32 for IPv6 starts; `first` and `last` count addresses, not words. */
export function runPrefix128(starts: Uint32Array, first: number, last: number, words: readonly number[]): number {
  let prefix = 0;
  if (!isZeroAt(starts, first * 4)) prefix = Math.max(prefix, commonPrefix128(words, minusOneAt(starts, first * 4), 0) + 1);
  if ((last + 1) * 4 < starts.length) prefix = Math.max(prefix, commonPrefix128(words, starts, (last + 1) * 4) + 1);
  return prefix;
}

function commonPrefix32(a: number, b: number): number {
  return a === b ? 32 : Math.clz32((a ^ b) >>> 0);
}

/** Common leading bits of `a` and the four words of `b` from `offset`. */
function commonPrefix128(a: readonly number[], b: ArrayLike<number>, offset: number): number {
  for (let w = 0; w < 4; w++) {
    const x = ((a[w] as number) ^ (b[offset + w] as number)) >>> 0;
    if (x !== 0) return w * 32 + Math.clz32(x);
  }
  return 128;
}

function isZeroAt(starts: Uint32Array, offset: number): boolean {
  return starts[offset] === 0 && starts[offset + 1] === 0 && starts[offset + 2] === 0 && starts[offset + 3] === 0;
}

// Scratch words for one call at a time (the callers are synchronous).
const BELOW = new Uint32Array(4);

/** The address one below the start at `offset` (which is not zero), in BELOW. */
function minusOneAt(starts: Uint32Array, offset: number): Uint32Array {
  const words = BELOW;
  for (let w = 0; w < 4; w++) words[w] = starts[offset + w] as number;
  for (let w = 3; w >= 0; w--) {
    if (words[w] !== 0) {
      words[w] = (words[w] as number) - 1;
      return words;
    }
    words[w] = 0xffffffff;
  }
  return words;
}

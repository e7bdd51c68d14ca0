/**
 * Binary search over sorted address starts packed in a Uint32Array: one word per IPv4
 * address, or four words (most significant first) per IPv6 address. Both the range
 * index and the special-purpose table answer "the last start ≤ address" with these;
 * the first start must be 0, so there always is one.
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

/**
 * A range of addresses with a value: `start` and `end` inclusive, as BigInts so one code
 * path serves IPv4 (0 … 2^32-1) and IPv6 (0 … 2^128-1) at import time.
 */
export interface ValueRange<V> {
  readonly start: bigint;
  readonly end: bigint;
  readonly value: V;
}

export type Family = 4 | 6;

export function maxAddress(family: Family): bigint {
  return family === 4 ? 0xffffffffn : (1n << 128n) - 1n;
}

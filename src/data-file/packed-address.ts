/**
 * Addresses in the data file and in the importer's packed arrays: one 32-bit word for
 * IPv4, four for IPv6, most significant word first, each word as the platform's u32
 * (little-endian on every platform Bun runs on).
 */

// An address goes into words through a 64-bit pair: two BigInt operations instead of
// eight; the word order inside each half is little-endian, as on every platform Bun runs on.
const HALVES = new BigUint64Array(2);
const HALF_WORDS = new Uint32Array(HALVES.buffer);

/** Writes `value` as `words` 32-bit words, most significant first, at `at`. */
export function writeAddress(value: bigint, words: 1 | 4, into: Uint32Array, at: number): void {
  if (words === 1) {
    into[at] = Number(value);
    return;
  }
  HALVES[0] = value >> 64n;
  HALVES[1] = value; // stored modulo 2^64: the low half
  into[at] = HALF_WORDS[1] as number;
  into[at + 1] = HALF_WORDS[0] as number;
  into[at + 2] = HALF_WORDS[3] as number;
  into[at + 3] = HALF_WORDS[2] as number;
}

/** Reads the address at `at` back as a BigInt. */
export function readAddress(from: Uint32Array, words: 1 | 4, at: number): bigint {
  let value = 0n;
  for (let w = 0; w < words; w++) value = (value << 32n) | BigInt(from[at + w] as number);
  return value;
}

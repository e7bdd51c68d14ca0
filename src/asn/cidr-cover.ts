/**
 * The fewest CIDR blocks that cover exactly an interval of addresses, in address order:
 * each block is the largest that starts at the first address not yet covered (aligned
 * on its size) and ends inside the interval. Intervals that neither overlap nor touch
 * need their own blocks (a block spanning the gap would cover addresses outside), so
 * covering each maximal interval this way gives the fewest blocks for a whole set.
 */

/** Calls `emit(first, prefix)` for each block covering IPv4 addresses `first`…`last` (unsigned, inclusive). */
export function coverIpv4(first: number, last: number, emit: (network: number, prefix: number) => void): void {
  let start = first;
  while (start <= last) {
    // The alignment of `start`: its trailing zero bits (32 for 0.0.0.0).
    let bits = start === 0 ? 32 : 31 - Math.clz32(start & -start);
    while (bits > 0 && start + 2 ** bits - 1 > last) bits--;
    emit(start, 32 - bits);
    start += 2 ** bits;
  }
}

const ONE = 1n;

/** Calls `emit(first, prefix)` for each block covering IPv6 addresses `first`…`last` (inclusive). */
export function coverIpv6(first: bigint, last: bigint, emit: (network: bigint, prefix: number) => void): void {
  let start = first;
  while (start <= last) {
    let bits = start === 0n ? 128 : trailingZeros(start);
    while (bits > 0 && start + (ONE << BigInt(bits)) - ONE > last) bits--;
    emit(start, 128 - bits);
    start += ONE << BigInt(bits);
  }
}

/** coverIpv6 with each block's network as four 32-bit words, most significant first (`words` is reused from block to block). */
export function coverIpv6Words(first: bigint, last: bigint, emit: (words: Uint32Array, prefix: number) => void, words = new Uint32Array(4)): void {
  coverIpv6(first, last, (network, prefix) => {
    words[0] = Number(network >> 96n);
    words[1] = Number((network >> 64n) & 0xffffffffn);
    words[2] = Number((network >> 32n) & 0xffffffffn);
    words[3] = Number(network & 0xffffffffn);
    emit(words, prefix);
  });
}

function trailingZeros(value: bigint): number {
  let bits = 0;
  let rest = value;
  while ((rest & 0xffffffffn) === 0n) {
    bits += 32;
    rest >>= 32n;
  }
  const low = Number(rest & 0xffffffffn);
  return bits + 31 - Math.clz32(low & -low);
}

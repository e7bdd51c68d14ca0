/**
 * A parsed IP address.
 *
 * An IPv4-mapped IPv6 address (`::ffff:8.8.8.8`) is represented as the IPv4 address it
 * carries: the contract answers it as that IPv4 address.
 */
export type Address = IPv4Address | IPv6Address;

export interface IPv4Address {
  readonly version: 4;
  /** Canonical text: dotted quad without leading zeros. */
  readonly text: string;
  /** The address as an unsigned 32-bit integer (0 … 2^32-1). */
  readonly value: number;
}

export interface IPv6Address {
  readonly version: 6;
  /** Canonical text: RFC 5952 (lower case, longest run of zero groups compressed). */
  readonly text: string;
  /** The 128 bits as four unsigned 32-bit words, most significant first. */
  readonly words: readonly [number, number, number, number];
}

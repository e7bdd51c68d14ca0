import type { Address } from "../address/address.ts";

/**
 * Whose bucket a request with an unknown key spends from: the client's address, an IPv6
 * client's /64 (one subscriber's LAN or one server's allocation, which a guesser holds
 * whole: per /128 it could spread its guesses over 2^64 buckets).
 */
export function clientThrottleId(client: Address): string {
  if (client.version === 4) return client.text;
  const [high, low] = client.words;
  return `${high.toString(16)}.${low.toString(16)}/64`;
}

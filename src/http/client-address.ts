import type { Address } from "../address/address.ts";
import { cidrContains, type Cidr } from "../address/cidr.ts";
import { parseAddress } from "../address/parse.ts";

/**
 * The caller's address for /v1/me (CONTRACT §5).
 *
 * The TCP peer is the caller unless the peer is a trusted proxy. Then X-Forwarded-For is
 * read from the right (each proxy appends the address it received from), skipping
 * trusted proxies; the first address that is not one is the client. A hop that is not an
 * address ends the walk at the last trusted hop, so a forged or garbled header can never
 * name an arbitrary address. Other forwarding headers (Forwarded, X-Real-IP) are never
 * read. An untrusted peer's headers are never read at all.
 */
export function clientAddress(peer: Address, forwardedFor: string | null, trusted: readonly Cidr[]): Address {
  if (!isTrusted(peer, trusted) || !forwardedFor) return peer;
  let client = peer;
  const hops = forwardedFor.split(",");
  for (let i = hops.length - 1; i >= 0; i--) {
    const text = (hops[i] as string).trim();
    // An empty list element is no hop (RFC 9110 §5.6.1: recipients ignore them).
    if (text === "") continue;
    const hop = parseAddress(text);
    if (!hop) return client;
    client = hop;
    if (!isTrusted(hop, trusted)) return hop;
  }
  return client;
}

function isTrusted(address: Address, trusted: readonly Cidr[]): boolean {
  return trusted.some((cidr) => cidrContains(cidr, address));
}

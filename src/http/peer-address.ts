import type { Address } from "../address/address.ts";
import { parseAddress } from "../address/parse.ts";

interface PeerSource {
  requestIP(request: Request): { address: string } | null;
}

/**
 * The TCP peer of a request, with an IPv4-mapped IPv6 peer (a dual-stack socket's view
 * of an IPv4 client) given as its IPv4 address.
 */
export function peerAddress(request: Request, server: PeerSource | null): Address {
  const peer = server?.requestIP(request);
  const address = peer ? parseAddress(peer.address) : null;
  if (!address) throw new Error("the request has no peer address (it did not come through a socket)");
  return address;
}

/**
 * The IANA IPv4 and IPv6 Special-Purpose Address Registries (RFC 6890, RFC 8190 and
 * their updates): every row, with its "Globally Reachable" value, as the registries are
 * published in 2026 (the IPv6 registry last updated 2025-10-09, with 100:0:0:1::/64 of
 * RFC 9780; the IPv4 registry with 192.88.99.2/32 of RFC 6751). A row that names two
 * blocks (192.0.0.170/32, 192.0.0.171/32) is two entries here.
 *
 * `reachable` is the registry's column: true, false, or null for N/A and for the blank
 * values of terminated rows (192.88.99.0/24, 2001:10::/28); null blocks follow the rule
 * of the block around them. `reason` is the stable name an `address_not_public` answer
 * carries.
 */
export interface SpecialBlock {
  readonly cidr: string;
  readonly reason: string;
  readonly reachable: boolean | null;
}

export const IPV4_SPECIAL_BLOCKS: readonly SpecialBlock[] = [
  { cidr: "0.0.0.0/8", reason: "this-network", reachable: false },
  { cidr: "0.0.0.0/32", reason: "this-host", reachable: false },
  { cidr: "10.0.0.0/8", reason: "private-use", reachable: false },
  { cidr: "100.64.0.0/10", reason: "shared-address-space", reachable: false },
  { cidr: "127.0.0.0/8", reason: "loopback", reachable: false },
  { cidr: "169.254.0.0/16", reason: "link-local", reachable: false },
  { cidr: "172.16.0.0/12", reason: "private-use", reachable: false },
  { cidr: "192.0.0.0/24", reason: "ietf-protocol-assignments", reachable: false },
  { cidr: "192.0.0.0/29", reason: "ipv4-service-continuity", reachable: false },
  { cidr: "192.0.0.8/32", reason: "ipv4-dummy-address", reachable: false },
  { cidr: "192.0.0.9/32", reason: "port-control-protocol-anycast", reachable: true },
  { cidr: "192.0.0.10/32", reason: "turn-anycast", reachable: true },
  { cidr: "192.0.0.170/32", reason: "nat64-dns64-discovery", reachable: false },
  { cidr: "192.0.0.171/32", reason: "nat64-dns64-discovery", reachable: false },
  { cidr: "192.0.2.0/24", reason: "documentation", reachable: false },
  { cidr: "192.31.196.0/24", reason: "as112", reachable: true },
  { cidr: "192.52.193.0/24", reason: "amt", reachable: true },
  { cidr: "192.88.99.0/24", reason: "6to4-relay-anycast", reachable: null },
  { cidr: "192.88.99.2/32", reason: "6a44-relay-anycast", reachable: false },
  { cidr: "192.168.0.0/16", reason: "private-use", reachable: false },
  { cidr: "192.175.48.0/24", reason: "as112", reachable: true },
  { cidr: "198.18.0.0/15", reason: "benchmarking", reachable: false },
  { cidr: "198.51.100.0/24", reason: "documentation", reachable: false },
  { cidr: "203.0.113.0/24", reason: "documentation", reachable: false },
  { cidr: "240.0.0.0/4", reason: "reserved", reachable: false },
  { cidr: "255.255.255.255/32", reason: "limited-broadcast", reachable: false },
];

export const IPV6_SPECIAL_BLOCKS: readonly SpecialBlock[] = [
  { cidr: "::1/128", reason: "loopback", reachable: false },
  { cidr: "::/128", reason: "unspecified", reachable: false },
  { cidr: "::ffff:0:0/96", reason: "ipv4-mapped", reachable: false },
  { cidr: "64:ff9b::/96", reason: "ipv4-ipv6-translation", reachable: true },
  { cidr: "64:ff9b:1::/48", reason: "ipv4-ipv6-translation", reachable: false },
  { cidr: "100::/64", reason: "discard-only", reachable: false },
  { cidr: "100:0:0:1::/64", reason: "dummy-prefix", reachable: false },
  { cidr: "2001::/23", reason: "ietf-protocol-assignments", reachable: false },
  { cidr: "2001::/32", reason: "teredo", reachable: null },
  { cidr: "2001:1::1/128", reason: "port-control-protocol-anycast", reachable: true },
  { cidr: "2001:1::2/128", reason: "turn-anycast", reachable: true },
  { cidr: "2001:1::3/128", reason: "dns-sd-srp-anycast", reachable: true },
  { cidr: "2001:2::/48", reason: "benchmarking", reachable: false },
  { cidr: "2001:3::/32", reason: "amt", reachable: true },
  { cidr: "2001:4:112::/48", reason: "as112", reachable: true },
  { cidr: "2001:10::/28", reason: "orchid", reachable: null },
  { cidr: "2001:20::/28", reason: "orchidv2", reachable: true },
  { cidr: "2001:30::/28", reason: "drone-remote-id", reachable: true },
  { cidr: "2001:db8::/32", reason: "documentation", reachable: false },
  { cidr: "2002::/16", reason: "6to4", reachable: null },
  { cidr: "2620:4f:8000::/48", reason: "as112", reachable: true },
  { cidr: "3fff::/20", reason: "documentation", reachable: false },
  { cidr: "5f00::/16", reason: "segment-routing-sids", reachable: false },
  { cidr: "fc00::/7", reason: "unique-local", reachable: false },
  { cidr: "fe80::/10", reason: "link-local", reachable: false },
];

/**
 * Space the registries do not list but that is not public either (CONTRACT §2):
 * multicast, and IPv6 outside 2000::/3 (global unicast). Registry blocks inside these
 * keep their own reason (64:ff9b::/96 answers ipv4-ipv6-translation, not reserved), but
 * never count as public.
 */
export const IPV4_MULTICAST = { cidr: "224.0.0.0/4", reason: "multicast" } as const;
export const IPV6_MULTICAST = { cidr: "ff00::/8", reason: "multicast" } as const;
export const IPV6_OUTSIDE_GLOBAL_UNICAST_REASON = "reserved";

/**
 * The IANA "Special-Purpose AS Numbers" registry (RFC 7249 §2.2 set it up), every row,
 * plus the rows of IANA's 16-bit and 32-bit AS number registries that are reserved
 * rather than allocated to a regional registry (65552–131071). Each entry names the RFC
 * that reserves it.
 *
 * `public` is the counterpart of the address registries' "Globally Reachable" column:
 * the AS112 project's AS is a real AS, announced in the global routing table (its
 * prefixes 192.175.48.0/24 and 2620:4f:8000::/48 are globally reachable), so it answers
 * like any other AS. Every other row is refused with `asn_not_public` and its `reason`.
 */
export interface SpecialAsnRange {
  readonly first: number;
  readonly last: number;
  readonly reason: string;
  readonly rfc: string;
  readonly public: boolean;
}

export const SPECIAL_ASN_RANGES: readonly SpecialAsnRange[] = [
  // RFC 7607: AS 0 is reserved; a BGP speaker must not originate or accept it in AS_PATH.
  { first: 0, last: 0, reason: "reserved", rfc: "RFC 7607", public: false },
  // RFC 7534: the AS112 project's anycast sink for misdirected reverse DNS queries.
  { first: 112, last: 112, reason: "as112", rfc: "RFC 7534", public: true },
  // RFC 6793: AS_TRANS, the stand-in for a four-octet AS number to a two-octet speaker.
  { first: 23456, last: 23456, reason: "as-trans", rfc: "RFC 6793", public: false },
  // RFC 5398: for documentation and sample code (16-bit block).
  { first: 64496, last: 64511, reason: "documentation", rfc: "RFC 5398", public: false },
  // RFC 6996 (replacing RFC 1930 §10): for private use (16-bit block).
  { first: 64512, last: 65534, reason: "private-use", rfc: "RFC 6996", public: false },
  // RFC 7300: the last 16-bit AS number.
  { first: 65535, last: 65535, reason: "reserved", rfc: "RFC 7300", public: false },
  // RFC 5398: for documentation and sample code (32-bit block).
  { first: 65536, last: 65551, reason: "documentation", rfc: "RFC 5398", public: false },
  // RFC 6793: reserved by IANA in the 32-bit registry, between the documentation block
  // and the first block allocated to a regional registry (131072).
  { first: 65552, last: 131071, reason: "reserved", rfc: "RFC 6793", public: false },
  // RFC 6996: for private use (32-bit block).
  { first: 4200000000, last: 4294967294, reason: "private-use", rfc: "RFC 6996", public: false },
  // RFC 7300: the last 32-bit AS number.
  { first: 4294967295, last: 4294967295, reason: "reserved", rfc: "RFC 7300", public: false },
];

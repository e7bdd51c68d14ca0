import type { Address } from "../address/address.ts";
import type { IndexHit } from "../index/range-index.ts";

/**
 * One lookup's answer (CONTRACT §1). Fields beyond these appear when an imported data
 * set carries them.
 */
export interface LookupResult {
  ip: string;
  version: 4 | 6;
  found: boolean;
  network: string | null;
  asn: number | null;
  as_name: string | null;
  country_code: string | null;
  country: string | null;
}

/** Builds the result for an address from what the range index found (null: nothing). */
export function toLookupResult(address: Address, hit: IndexHit | null): LookupResult {
  if (!hit) {
    return {
      ip: address.text,
      version: address.version,
      found: false,
      network: null,
      asn: null,
      as_name: null,
      country_code: null,
      country: null,
    };
  }
  return {
    ip: address.text,
    version: address.version,
    found: true,
    network: hit.network,
    ...hit.record,
  };
}

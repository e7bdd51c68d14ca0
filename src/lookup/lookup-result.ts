import type { Address } from "../address/address.ts";
import type { NetworkRecord } from "../index/network-record.ts";
import type { Privacy } from "../index/privacy.ts";
import type { IndexHit } from "../index/range-index.ts";
import type { FieldValue } from "../index/record-fields.ts";

/**
 * One lookup's answer (CONTRACT §1). Fields beyond the first eight appear when the
 * loaded data set has them (city, region, coordinates, …), null where it has no value;
 * `privacy` (CONTRACT §15) comes last, always.
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
  privacy: Privacy;
  [field: string]: FieldValue | boolean;
}

/**
 * Builds the result for an address from what the range index found (null: nothing);
 * `notFound` is the index's record for nothing found (every field null, and the
 * privacy of an address no signal source covers: RangeIndex.notFoundRecord).
 */
export function toLookupResult(address: Address, hit: IndexHit | null, notFound: NetworkRecord): LookupResult {
  const head = { ip: address.text, version: address.version };
  if (hit) return { ...head, found: true, network: hit.network, ...hit.record };
  return { ...head, found: false, network: null, ...notFound };
}

import type { Address } from "../address/address.ts";
import type { IndexHit } from "../index/range-index.ts";
import type { FieldValue, RecordField } from "../index/record-fields.ts";

/**
 * One lookup's answer (CONTRACT §1). Fields beyond the first eight appear when the
 * loaded data set has them (city, region, coordinates, …), null where it has no value.
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
  [field: string]: FieldValue | boolean;
}

/**
 * Builds the result for an address from what the range index found (null: nothing);
 * `fields` are the data set's result fields, which a not-found result lists as null.
 */
export function toLookupResult(address: Address, hit: IndexHit | null, fields: readonly RecordField[]): LookupResult {
  const head = { ip: address.text, version: address.version };
  if (hit) return { ...head, found: true, network: hit.network, ...hit.record };
  const result: LookupResult = { ...head, found: false, network: null, asn: null, as_name: null, country_code: null, country: null };
  for (const field of fields) result[field] = null;
  return result;
}

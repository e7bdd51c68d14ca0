import type { Address } from "../address/address.ts";
import type { IndexHit } from "../index/range-index.ts";
import type { NetworkRecord } from "../index/network-record.ts";

/**
 * A LookupResult's JSON text, written directly: the fields of CONTRACT §1 in their
 * order, equal to JSON.stringify(toLookupResult(address, hit)) (a test holds the two
 * together). Each record's fields are encoded once and reused for every address in its
 * range; `ip` and `network` are canonical address text, which never needs escaping.
 * This is the hot path of a batch: it skips building an object per result only to
 * serialise it.
 */
const fragments = new WeakMap<NetworkRecord, string>();

const NOT_FOUND = '"found":false,"network":null,"asn":null,"as_name":null,"country_code":null,"country":null}';

function fragmentOf(record: NetworkRecord): string {
  let fragment = fragments.get(record);
  if (fragment === undefined) {
    fragment = JSON.stringify({ asn: record.asn, as_name: record.as_name, country_code: record.country_code, country: record.country }).slice(1);
    fragments.set(record, fragment);
  }
  return fragment;
}

export function resultJson(address: Address, hit: IndexHit | null): string {
  const head = `{"ip":"${address.text}","version":${address.version},`;
  if (!hit) return head + NOT_FOUND;
  return `${head}"found":true,"network":"${hit.network}",${fragmentOf(hit.record)}`;
}

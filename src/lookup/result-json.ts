import type { Address } from "../address/address.ts";
import type { IndexHit } from "../index/range-index.ts";

/**
 * A LookupResult's JSON text, written directly: the fields of CONTRACT §1 in their
 * order, equal to JSON.stringify(toLookupResult(…)) (a test holds the two together).
 * The record's members come from the index as JSON text encoded once per record at
 * import; `ip` and `network` are canonical address text, which never needs escaping.
 * This is the hot path of a batch: it skips building an object per result only to
 * serialise it.
 *
 * @param notFoundJson the index's members for "nothing found" (every field null)
 */
export function resultJson(address: Address, hit: IndexHit | null, notFoundJson: string): string {
  const head = `{"ip":"${address.text}","version":${address.version},`;
  if (!hit) return `${head}"found":false,"network":null,${notFoundJson}`;
  return `${head}"found":true,"network":"${hit.network}",${hit.membersJson}`;
}

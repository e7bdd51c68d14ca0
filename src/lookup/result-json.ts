import type { Address } from "../address/address.ts";
import type { IndexHit } from "../index/range-index.ts";
import type { ByteWriter } from "./byte-writer.ts";

const encoder = new TextEncoder();
const IP = encoder.encode('{"ip":"');
const FOUND_4 = encoder.encode('","version":4,"found":true,"network":"');
const FOUND_6 = encoder.encode('","version":6,"found":true,"network":"');
const NOT_FOUND_4 = encoder.encode('","version":4,"found":false,"network":null,');
const NOT_FOUND_6 = encoder.encode('","version":6,"found":false,"network":null,');
/** `/0",` to `/128",`: what follows a network's first address, by prefix length. */
const AFTER_FIRST_ADDRESS = Array.from({ length: 129 }, (_, prefix) => encoder.encode(`/${prefix}",`));

/**
 * Writes one LookupResult as JSON, bytes equal to JSON.stringify(toLookupResult(…))
 * (a test holds the two together): the fields of CONTRACT §1 in their order. The
 * record's members come from the index already encoded, once per record; `ip` and
 * `network` are written as canonical address text straight from their numbers (ASCII,
 * never in need of escaping), without making strings first. The constant text between
 * them is written in as few pieces as the fields' order allows: a result costs a few
 * copies, not one a field.
 *
 * @param notFound the index's members for "nothing found" (every field null), encoded
 */
export function writeResult(out: ByteWriter, address: Address, hit: IndexHit | null, notFound: Uint8Array): void {
  out.raw(IP);
  const v4 = address.version === 4;
  if (v4) out.ipv4(address.value);
  else out.ipv6(address.words);
  if (!hit) {
    out.raw(v4 ? NOT_FOUND_4 : NOT_FOUND_6);
    out.raw(notFound);
    return;
  }
  out.raw(v4 ? FOUND_4 : FOUND_6);
  if (hit.ipv6Network) out.ipv6(hit.ipv6Network);
  else out.ipv4(hit.ipv4Network);
  out.raw(AFTER_FIRST_ADDRESS[hit.prefix] as Uint8Array);
  out.raw(hit.membersBytes);
}

import type { Address } from "../address/address.ts";
import type { IndexHit } from "../index/range-index.ts";
import type { ByteWriter } from "./byte-writer.ts";

const encoder = new TextEncoder();
const IP = encoder.encode('{"ip":"');
const VERSION_4 = encoder.encode('","version":4,');
const VERSION_6 = encoder.encode('","version":6,');
const FOUND = encoder.encode('"found":true,"network":"');
const SLASH = encoder.encode("/");
const AFTER_NETWORK = encoder.encode('",');
const NOT_FOUND = encoder.encode('"found":false,"network":null,');

/**
 * Writes one LookupResult as JSON, bytes equal to JSON.stringify(toLookupResult(…))
 * (a test holds the two together): the fields of CONTRACT §1 in their order. The
 * record's members come from the index already encoded, once per record; `ip` and
 * `network` are written as canonical address text straight from their numbers (ASCII,
 * never in need of escaping), without making strings first.
 *
 * @param notFound the index's members for "nothing found" (every field null), encoded
 */
export function writeResult(out: ByteWriter, address: Address, hit: IndexHit | null, notFound: Uint8Array): void {
  out.raw(IP);
  if (address.version === 4) out.ipv4(address.value);
  else out.ipv6(address.words);
  out.raw(address.version === 4 ? VERSION_4 : VERSION_6);
  if (!hit) {
    out.raw(NOT_FOUND);
    out.raw(notFound);
    return;
  }
  out.raw(FOUND);
  if (hit.ipv6Network) out.ipv6(hit.ipv6Network);
  else out.ipv4(hit.ipv4Network);
  out.raw(SLASH);
  out.smallInteger(hit.prefix);
  out.raw(AFTER_NETWORK);
  out.raw(hit.membersBytes);
}

import type { IndexImage } from "../index/range-index.ts";

/**
 * Whether each AS of the AS index is a hosting or cloud provider's (CONTRACT §14, from
 * the signals of §15): one byte per slot of `asns` (the AS numbers in ascending order),
 * 1 for an AS the data's hosting list names and 0 for any other, or null when the data
 * was built without a hosting list, in which case every AsnResult answers
 * `"hosting": null`. The one place the AS answers learn about hosting.
 */
export function asnHostingFlags(image: IndexImage, asns: Uint32Array): Uint8Array | null {
  const listed = image.hostingAsns;
  if (listed === null || listed === undefined) return null;
  // Shared, as the rest of the AS index: every worker thread reads the one copy.
  const flags = new Uint8Array(new SharedArrayBuffer(asns.length));
  // Both ascending: one walk.
  let at = 0;
  for (let slot = 0; slot < asns.length; slot++) {
    const asn = asns[slot] as number;
    while (at < listed.length && (listed[at] as number) < asn) at++;
    if (at < listed.length && listed[at] === asn) flags[slot] = 1;
  }
  return flags;
}

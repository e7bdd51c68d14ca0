import type { Address } from "./address.ts";
import { classifyAddress } from "./classify.ts";
import { parseAddress } from "./parse.ts";

/** The verdict on one entry of a lookup request. */
export type AddressCheck =
  | { readonly ok: true; readonly address: Address }
  | { readonly ok: false; readonly code: "invalid_address" }
  | { readonly ok: false; readonly code: "address_not_public"; readonly reason: string };

const INVALID: AddressCheck = { ok: false, code: "invalid_address" };

/** Parses and classifies one entry: a public address, or why it cannot be looked up. */
export function checkAddress(text: string): AddressCheck {
  const address = parseAddress(text);
  if (!address) return INVALID;
  const reason = classifyAddress(address);
  return reason === null ? { ok: true, address } : { ok: false, code: "address_not_public", reason };
}

/**
 * The entry's address when it is a public one, else null (checkAddress says why): what
 * checkAddress accepts, without the verdict object it makes, for the common case of a
 * lookup: 1,000 objects fewer a batch of 1,000, about 2% of its CPU a request (three
 * runs of 10–16 pairs: 1.02, 0.99 and 1.03 for batches of 1,000, 1.02 and 1.03 for 100).
 */
export function publicAddress(text: string): Address | null {
  const address = parseAddress(text);
  return address !== null && classifyAddress(address) === null ? address : null;
}

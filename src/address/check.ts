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

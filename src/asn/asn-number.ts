import { SPECIAL_ASN_RANGES } from "./special-purpose-asn.ts";

/** The largest AS number: AS numbers are four octets (RFC 6793). */
export const MAX_ASN = 4294967295;

/** The verdict on an AS number as a caller wrote it. */
export type AsnCheck =
  | { readonly ok: true; readonly asn: number }
  | { readonly ok: false; readonly code: "invalid_asn" }
  | { readonly ok: false; readonly code: "asn_not_public"; readonly asn: number; readonly reason: string };

/**
 * `13335` or `AS13335` (the prefix in any case): a decimal number of 0–4294967295 with
 * no sign, no leading zeros (0 itself is fine) and nothing around it.
 */
const ASN_TEXT = /^(?:[Aa][Ss])?(0|[1-9][0-9]{0,9})$/;

/** The number an AS text names, or null when it is not one in the accepted forms. */
export function parseAsn(text: string): number | null {
  const match = ASN_TEXT.exec(text);
  if (!match) return null;
  const asn = Number(match[1]);
  return asn <= MAX_ASN ? asn : null;
}

/** Why an AS number is not public (the special-purpose registry's reason), or null when it is. */
export function classifyAsn(asn: number): string | null {
  for (const range of SPECIAL_ASN_RANGES) {
    if (asn >= range.first && asn <= range.last) return range.public ? null : range.reason;
  }
  return null;
}

/** Parses and classifies an AS number: a public one, or why it cannot be answered. */
export function checkAsn(text: string): AsnCheck {
  const asn = parseAsn(text);
  if (asn === null) return { ok: false, code: "invalid_asn" };
  const reason = classifyAsn(asn);
  return reason === null ? { ok: true, asn } : { ok: false, code: "asn_not_public", asn, reason };
}

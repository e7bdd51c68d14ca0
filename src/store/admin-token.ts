/**
 * Admin token secrets and ids: like API keys (see secret.ts: 256 random bits, only the
 * SHA-256 stored, hashed with the same hashSecret), with a prefix of their own, `ipla_`,
 * so that an operator tells one from an API key (`ipl_`) at a glance. Either is looked
 * up only among its own kind, so neither is ever accepted as the other.
 */

/** The recognisable start of every admin token. */
export const ADMIN_TOKEN_PREFIX = "ipla_";

const ID_ALPHABET = "abcdefghijklmnopqrstuvwxyz234567";

/** A new random admin token, `ipla_` and 32 random bytes in base64url. */
export function newAdminSecret(): string {
  return ADMIN_TOKEN_PREFIX + Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
}

/** A new public admin token id, `adm_` and 16 random base32 characters (80 bits). */
export function newAdminTokenId(): string {
  // 256 is a multiple of 32, so `byte & 31` picks every character equally often.
  let id = "adm_";
  for (const byte of crypto.getRandomValues(new Uint8Array(16))) id += ID_ALPHABET[byte & 31];
  return id;
}

/** Whether text has the shape of an admin token (a cheap refusal before any lookup). */
export function looksLikeAdminSecret(text: string): boolean {
  return /^ipla_[A-Za-z0-9_-]{43}$/.test(text);
}

/**
 * API key secrets and ids.
 *
 * A secret is `ipl_` and 32 random bytes in base64url (256 bits). Only its SHA-256 is
 * stored. A slow password hash (bcrypt, argon2) would add nothing here: a 256-bit random
 * secret cannot be guessed or brute-forced from its hash, and a fast hash keeps the key
 * check on every request cheap.
 */
export const SECRET_PREFIX = "ipl_";

export function newSecret(): string {
  return SECRET_PREFIX + Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
}

/** A public key id, `key_` and 16 random base32 characters: unrelated to the secret. */
export function newKeyId(): string {
  const alphabet = "abcdefghijklmnopqrstuvwxyz234567";
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  let id = "key_";
  for (const byte of bytes) id += alphabet[byte & 31];
  return id;
}

/** The stored form of a secret: lower-case hex SHA-256. */
export function hashSecret(secret: string): string {
  return new Bun.CryptoHasher("sha256").update(secret).digest("hex");
}

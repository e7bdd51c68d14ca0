/**
 * API key secrets and ids.
 *
 * A secret is `ipl_` and 32 random bytes in base64url (256 bits). Only its SHA-256 is
 * stored. A slow password hash (bcrypt, scrypt, argon2) protects low-entropy secrets
 * that people choose; a 256-bit random secret cannot be guessed or brute-forced from
 * its hash whatever the hash costs, so a fast hash loses nothing and keeps the check
 * of an unknown bearer token (one hash per request) cheap.
 */

/** The recognisable start of every secret. */
export const SECRET_PREFIX = "ipl_";

/** The length of a secret: the prefix and 43 base64url characters (32 bytes). */
export const SECRET_LENGTH = SECRET_PREFIX.length + 43;

const ID_ALPHABET = "abcdefghijklmnopqrstuvwxyz234567";

/** A new random secret, `ipl_` and 32 random bytes in base64url. */
export function newSecret(): string {
  return SECRET_PREFIX + Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
}

/**
 * A new public key id, `key_` and 16 random base32 characters (80 bits), drawn apart
 * from the secret so that an id says nothing about it.
 */
export function newKeyId(): string {
  // 256 is a multiple of 32, so `byte & 31` picks every character equally often.
  let id = "key_";
  for (const byte of crypto.getRandomValues(new Uint8Array(16))) id += ID_ALPHABET[byte & 31];
  return id;
}

/**
 * The stored form of a secret: lower-case hex SHA-256 of its UTF-8 text. The request
 * path hashes incoming bearer tokens with this same function.
 */
export function hashSecret(secret: string): string {
  // Bun.SHA256.hash measured ~140 ns a call here, against ~340 ns for a new
  // Bun.CryptoHasher and ~670 ns for node:crypto's createHash.
  return Bun.SHA256.hash(secret, "hex");
}

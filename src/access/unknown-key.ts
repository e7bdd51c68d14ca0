import { ApiError } from "../errors/api-error.ts";

/** The challenge of every refusal of an API key (RFC 6750). */
export const REALM = 'Bearer realm="iplookup"';

/**
 * `invalid_key` for a secret no active key has: unknown, revoked, or a key gone from the
 * store while a key cache still held it (a charge that finds it gone). The same answer
 * whichever it is.
 */
export function unknownKeyError(): ApiError {
  return new ApiError("invalid_key", "the API key is unknown or revoked", {}, {
    "www-authenticate": `${REALM}, error="invalid_token", error_description="the API key is unknown or revoked"`,
  });
}

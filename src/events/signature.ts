import { createHmac, randomBytes } from "node:crypto";

/**
 * Webhook secrets and signatures, as Standard Webhooks defines them:
 *
 * - a secret is `whsec_` and the base64 of 24 random bytes (192 bits); the bytes, not
 *   the text, are the HMAC key;
 * - the signed content is `${webhook-id}.${webhook-timestamp}.${body}`, the timestamp
 *   in whole seconds since the epoch;
 * - `webhook-signature` is `v1,` and the base64 of HMAC-SHA256 of that content (a list of
 *   such, space-separated, when a secret is being replaced; iplookup sends one).
 */
export const SECRET_PREFIX = "whsec_";

export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(24).toString("base64")}`;
}

/** The key bytes of a secret. */
export function secretBytes(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error("not a webhook secret");
  return Buffer.from(secret.slice(SECRET_PREFIX.length), "base64");
}

/** The `webhook-signature` value for a message. */
export function signatureHeader(secret: string, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac("sha256", secretBytes(secret)).update(`${id}.${timestampSeconds}.${body}`).digest("base64");
  return `v1,${mac}`;
}

/** The three headers of a signed delivery. */
export function signedHeaders(secret: string, id: string, timestampSeconds: number, body: string): Record<string, string> {
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestampSeconds),
    "webhook-signature": signatureHeader(secret, id, timestampSeconds, body),
  };
}

import type { ApiKey } from "../store/store.ts";

/**
 * A key as the admin API and `iplookup keys … --json` show it: its fields and controls,
 * never its secret or a hash of it. One shape for both, so a field added to keys reaches
 * both at once (the admin API adds the key's activity to it).
 */
export function keyJson(key: ApiKey) {
  const controls = key.controls;
  return {
    id: key.id,
    name: key.name,
    plan: key.plan,
    created_at: key.createdAt,
    revoked_at: key.revokedAt,
    expires_at: controls?.expiresAt ?? null,
    allowed_cidrs: controls?.allowedCidrs ? [...controls.allowedCidrs] : null,
    allowed_origins: controls?.allowedOrigins ? [...controls.allowedOrigins] : null,
    metadata: { ...controls?.metadata },
    grace_until: graceEnd(key),
  };
}

/** Until when the secret before the last rotation kept (or keeps) working: a revocation ends it too. */
function graceEnd(key: ApiKey): string | null {
  const until = key.graceUntil ?? null;
  if (until === null || key.revokedAt === null) return until;
  return Date.parse(key.revokedAt) < Date.parse(until) ? key.revokedAt : until;
}

import type { Actor, AuditLog } from "../audit/audit-log.ts";
import type { AdminToken, IssuedAdminToken, Store } from "../store/store.ts";

/**
 * Creates an admin token (read-only or not) with its audit entry, `admin_token.created`,
 * in one transaction: the one way the command line makes one.
 */
export function createAdminTokenAudited(store: Store, audit: AuditLog, actor: Actor, name: string, readOnly: boolean): Promise<IssuedAdminToken> {
  const record = (issued: IssuedAdminToken) =>
    audit.change({
      actor,
      action: "admin_token.created",
      target: issued.token.id,
      changes: { name: { from: null, to: issued.token.name }, read_only: { from: null, to: readOnly } },
    });
  return readOnly ? store.createReadOnlyAdminToken(name, record) : store.createAdminToken(name, record);
}

/** What revokeAdminTokenAudited did: the token as it is afterwards, and whether this call revoked it (false: it was revoked already). */
export interface AdminTokenRevocation {
  readonly token: AdminToken;
  readonly revoked: boolean;
}

/**
 * Revokes an admin token with its audit entry, `admin_token.revoked`, in one transaction;
 * null when there is no such token. Revoking a revoked token changes, and records,
 * nothing, and answers `revoked` false.
 */
export async function revokeAdminTokenAudited(store: Store, audit: AuditLog, actor: Actor, id: string): Promise<AdminTokenRevocation | null> {
  // As KeyService.revoke: decided in the revoking transaction, by the last (committed) call of its audit.
  let revoked = false;
  const token = await store.revokeAdminToken(id, (after, before) => {
    revoked = before.revokedAt === null;
    return revoked ? audit.change({ actor, action: "admin_token.revoked", target: id, changes: { revoked_at: { from: null, to: after.revokedAt } } }) : null;
  });
  return token ? { token, revoked } : null;
}

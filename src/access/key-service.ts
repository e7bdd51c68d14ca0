import { changesBetween, type Actor, type AuditLog } from "../audit/audit-log.ts";
import { emitExpiringKeys, emitKeyEvent, expiringView } from "../events/emit.ts";
import type { ApiKey, IssuedKey, KeyChanges, KeyControls, Store } from "../store/store.ts";

/** The key events of CONTRACT §16 that a change announces to the webhooks. */
export type KeyEventType = "key.created" | "key.rotated" | "key.revoked" | "key.expiring";

/** How KeyService announces its changes: the clock of the events, and who hears of one the store could not take. */
export interface KeyEvents {
  readonly now: () => Date;
  /** The change stands; the event is lost (logged or printed by the caller). */
  readonly failed: (type: KeyEventType, key: ApiKey, error: unknown) => void;
}

/** What a key's audit entries compare: its plan and controls, as the admin API writes them. */
function auditView(key: ApiKey): Record<string, unknown> {
  const controls = key.controls;
  return {
    plan: key.plan,
    expires_at: controls?.expiresAt ?? null,
    allowed_cidrs: controls?.allowedCidrs ?? null,
    allowed_origins: controls?.allowedOrigins ?? null,
    metadata: controls?.metadata ?? null,
  };
}

/**
 * Every change to an API key, whoever makes it (the admin API, the console through it,
 * the command line): one method per kind of change, each of which makes the change in
 * the store with its audit log entry, in one transaction (see Audit in store.ts), and
 * announces it to the webhooks (the events of
 * CONTRACT §16: key.created, key.rotated, key.revoked), before the caller answers, so a
 * change answered is a change announced. A key created or given an expiry within the
 * next 7 days is announced as key.expiring at once too (serve's sweep, every ten minutes,
 * tells of the others; the event's once key keeps the two from telling it twice). This is
 * the one place where a key is created, changed, rotated or revoked.
 *
 * Values come checked already (src/access/key-control-values.ts); the store refuses what
 * it alone can know (an unknown plan, a key revoked meanwhile) with StoreError.
 */
export class KeyService {
  constructor(
    private readonly store: Store,
    private readonly audit: AuditLog,
    private readonly events: KeyEvents,
  ) {}

  async create(actor: Actor, name: string, plan: string, controls?: KeyControls): Promise<IssuedKey> {
    const issued = await this.store.createKey(name, plan, controls, (issued) =>
      this.audit.change({ actor, action: "key.created", target: issued.key.id, changes: changesBetween(null, { name: issued.key.name, ...auditView(issued.key) }) }),
    );
    await this.announce("key.created", issued.key);
    await this.announceExpiring(issued.key);
    return issued;
  }

  /**
   * Changes an active key's plan and controls at once; null when there is no such key.
   * A change that changes nothing records nothing.
   */
  async update(actor: Actor, id: string, changes: KeyChanges): Promise<ApiKey | null> {
    let newExpiry = false;
    const after = await this.store.updateKey(id, changes, (after, before) => {
      newExpiry = after.controls?.expiresAt !== before.controls?.expiresAt;
      const changed = changesBetween(auditView(before), auditView(after));
      return Object.keys(changed).length > 0 ? this.audit.change({ actor, action: "key.updated", target: id, changes: changed }) : null;
    });
    if (after && newExpiry) await this.announceExpiring(after);
    return after;
  }

  /** Gives an active key a new secret; the old one works `graceMs` longer (0: stops at once). Null when no such active key. */
  async rotate(actor: Actor, id: string, graceMs = 0): Promise<IssuedKey | null> {
    const rotated = await this.store.rotateKey(id, { graceMs }, (rotated, before) =>
      this.audit.change({
        actor,
        action: "key.rotated",
        target: id,
        changes: { grace_until: { from: before.graceUntil ?? null, to: rotated.key.graceUntil ?? null } },
      }),
    );
    if (rotated) await this.announce("key.rotated", rotated.key);
    return rotated;
  }

  /** Revokes a key; null when there is no such key. Revoking a revoked key changes, and records, nothing. */
  async revoke(actor: Actor, id: string): Promise<ApiKey | null> {
    let revokedNow = false;
    const revoked = await this.store.revokeKey(id, (revoked, before) => {
      revokedNow = before.revokedAt === null;
      return revokedNow ? this.audit.change({ actor, action: "key.revoked", target: id, changes: { revoked_at: { from: null, to: revoked.revokedAt } } }) : null;
    });
    if (revoked && revokedNow) await this.announce("key.revoked", revoked);
    return revoked;
  }

  private async announce(type: Exclude<KeyEventType, "key.expiring">, key: ApiKey): Promise<void> {
    try {
      await emitKeyEvent(this.store, type, key, this.events.now());
    } catch (error) {
      this.events.failed(type, key, error);
    }
  }

  /** key.expiring for a key whose expiry is within the notice now (nothing for any other). */
  private async announceExpiring(key: ApiKey): Promise<void> {
    try {
      await emitExpiringKeys(this.store, [expiringView(key)], this.events.now());
    } catch (error) {
      this.events.failed("key.expiring", key, error);
    }
  }
}

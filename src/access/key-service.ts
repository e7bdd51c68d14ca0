import { changesBetween, type Actor, type AuditLog } from "../audit/audit-log.ts";
import { expiringEvent, expiringView, keyEvent } from "../events/emit.ts";
import type { ApiKey, IssuedKey, KeyChanges, KeyControls, NewEvent, Store } from "../store/store.ts";

/** What KeyService.revoke did: the key as it is afterwards, and whether this call revoked it (false: it was revoked already). */
export interface KeyRevocation {
  readonly key: ApiKey;
  readonly revoked: boolean;
}

/** How KeyService announces its changes: the clock of the events. */
export interface KeyEvents {
  readonly now: () => Date;
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
 * the store with its audit log entry and the events that announce it to the webhooks
 * (CONTRACT §16: key.created, key.rotated, key.revoked), all in one transaction (see
 * Audit in store.ts): a change answered is a change recorded and announced, and a change
 * that fails leaves neither. A key created or given an expiry within the next 7 days is
 * announced as key.expiring at once too (serve's sweep, every ten minutes, tells of the
 * others; the event's once key keeps the two from telling it twice). This is the one
 * place where a key is created, changed, rotated or revoked.
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
    return this.store.createKey(name, plan, controls, (issued) => {
      const at = this.events.now();
      return this.audit.change(
        { actor, action: "key.created", target: issued.key.id, changes: changesBetween(null, { name: issued.key.name, ...auditView(issued.key) }) },
        [keyEvent("key.created", issued.key, at), ...expiring(issued.key, at)],
      );
    });
  }

  /**
   * Changes an active key's plan and controls at once; null when there is no such key.
   * A change that changes nothing records, and announces, nothing.
   */
  async update(actor: Actor, id: string, changes: KeyChanges): Promise<ApiKey | null> {
    return this.store.updateKey(id, changes, (after, before) => {
      const changed = changesBetween(auditView(before), auditView(after));
      if (Object.keys(changed).length === 0) return null;
      const newExpiry = after.controls?.expiresAt !== before.controls?.expiresAt;
      return this.audit.change({ actor, action: "key.updated", target: id, changes: changed }, newExpiry ? expiring(after, this.events.now()) : []);
    });
  }

  /** Gives an active key a new secret; the old one works `graceMs` longer (0: stops at once). Null when no such active key. */
  async rotate(actor: Actor, id: string, graceMs = 0): Promise<IssuedKey | null> {
    return this.store.rotateKey(id, { graceMs }, (rotated, before) =>
      this.audit.change(
        {
          actor,
          action: "key.rotated",
          target: id,
          changes: { grace_until: { from: before.graceUntil ?? null, to: rotated.key.graceUntil ?? null } },
        },
        [keyEvent("key.rotated", rotated.key, this.events.now())],
      ),
    );
  }

  /**
   * Revokes a key; null when there is no such key. Revoking a revoked key changes, records
   * and announces nothing, and answers `revoked` false with the key as it is.
   */
  async revoke(actor: Actor, id: string): Promise<KeyRevocation | null> {
    // Decided where the store decides it: in the revoking transaction, under its lock. Of
    // two revocations at once, whichever came second sees the key revoked there, however
    // both read it before. A change tried again calls its audit again: the last call is
    // the committed one.
    let revoked = false;
    const key = await this.store.revokeKey(id, (after, before) => {
      revoked = before.revokedAt === null;
      return revoked
        ? this.audit.change({ actor, action: "key.revoked", target: id, changes: { revoked_at: { from: null, to: after.revokedAt } } }, [
            keyEvent("key.revoked", after, this.events.now()),
          ])
        : null;
    });
    return key ? { key, revoked } : null;
  }
}

/** key.expiring for a key whose expiry is within the notice now (nothing for any other). */
function expiring(key: ApiKey, now: Date): NewEvent[] {
  const event = expiringEvent(expiringView(key), now);
  return event ? [event] : [];
}

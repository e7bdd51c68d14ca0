import { changesBetween, type Actor, type AuditLog } from "../audit/audit-log.ts";
import type { Store } from "../store/store.ts";
import type { Correction, CorrectionFields } from "./correction.ts";

/** A correction's audited members: its fields and its note. */
function audited(correction: Correction | null): Record<string, unknown> {
  return correction ? { ...correction.fields, note: correction.note } : {};
}

/**
 * Sets and removes local corrections with an audit entry each (CONTRACT §16), written in
 * the change's own transaction: the admin API, the console and the command line all
 * change corrections through here. `block` is a canonical CIDR (see
 * parseCorrectionBlock); the fields are checked already.
 */
export class CorrectionService {
  constructor(
    private readonly store: Store,
    private readonly audit: AuditLog,
  ) {}

  /** Setting what the block holds already changes nothing: the store writes nothing and no entry is recorded. */
  set(actor: Actor, block: string, fields: CorrectionFields, note: string | null): Promise<Correction> {
    return this.store.putCorrection(block, fields, note, (after, before) => {
      const changes = changesBetween(audited(before), audited(after));
      if (before && Object.keys(changes).length === 0) return null;
      return this.audit.change({ actor, action: before ? "correction.updated" : "correction.created", target: `correction:${block}`, changes });
    });
  }

  remove(actor: Actor, block: string): Promise<Correction | null> {
    return this.store.removeCorrection(block, (removed) =>
      this.audit.change({ actor, action: "correction.removed", target: `correction:${block}`, changes: changesBetween(audited(removed), {}) }),
    );
  }
}

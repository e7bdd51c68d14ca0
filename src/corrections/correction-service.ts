import { changesBetween, type Actor, type AuditLog } from "../audit/audit-log.ts";
import type { Store } from "../store/store.ts";
import type { Correction, CorrectionFields } from "./correction.ts";

/** A correction's audited members: its fields and its note. */
function audited(correction: Correction | null): Record<string, unknown> {
  return correction ? { ...correction.fields, note: correction.note } : {};
}

/**
 * Sets and removes local corrections with an audit entry each (CONTRACT §16): the admin
 * API, the console and the command line all change corrections through here. `block`
 * is a canonical CIDR (see parseCorrectionBlock); the fields are checked already.
 */
export class CorrectionService {
  constructor(
    private readonly store: Store,
    private readonly audit: AuditLog,
  ) {}

  async set(actor: Actor, block: string, fields: CorrectionFields, note: string | null): Promise<Correction> {
    const before = (await this.store.listCorrections()).find((correction) => correction.cidr === block) ?? null;
    const after = await this.store.putCorrection(block, fields, note);
    await this.audit.record({ actor, action: before ? "correction.updated" : "correction.created", target: `correction:${block}`, changes: changesBetween(audited(before), audited(after)) });
    return after;
  }

  async remove(actor: Actor, block: string): Promise<Correction | null> {
    const removed = await this.store.removeCorrection(block);
    if (removed) await this.audit.record({ actor, action: "correction.removed", target: `correction:${block}`, changes: changesBetween(audited(removed), {}) });
    return removed;
  }
}

import { changesBetween, everyMember, type Actor, type AuditLog } from "../audit/audit-log.ts";
import type { Plan, PlanChanges, Store } from "../store/store.ts";

function auditView(plan: Plan): Record<string, unknown> {
  return { max_batch_size: plan.maxBatchSize, monthly_units: plan.monthlyUnits, rate_limit: plan.rateLimit };
}

/**
 * Creates or changes a plan (Store.setPlan) with its audit log entry, in one transaction:
 * `plan.created` with every limit (null ones too: they are "unlimited"), or `plan.updated`
 * with what changed (nothing changed: no entry). The one way the admin API and the CLI
 * change a plan.
 */
export async function setPlanAudited(store: Store, audit: AuditLog, actor: Actor, name: string, changes: PlanChanges): Promise<Plan> {
  return store.setPlan(name, changes, (plan, before) => {
    const changed = before ? changesBetween(auditView(before), auditView(plan)) : everyMember(auditView(plan));
    return Object.keys(changed).length > 0 ? audit.change({ actor, action: before ? "plan.updated" : "plan.created", target: `plan:${plan.name}`, changes: changed }) : null;
  });
}

import { changesBetween, type Actor, type AuditLog } from "../audit/audit-log.ts";
import type { Plan, PlanChanges, Store } from "../store/store.ts";

function auditView(plan: Plan): Record<string, unknown> {
  return { max_batch_size: plan.maxBatchSize, monthly_units: plan.monthlyUnits, rate_limit: plan.rateLimit };
}

/**
 * Creates or changes a plan (Store.setPlan) and records it in the audit log:
 * `plan.created`, or `plan.updated` with what changed (nothing changed: no entry). The
 * one way the admin API and the CLI change a plan.
 */
export async function setPlanAudited(store: Store, audit: AuditLog, actor: Actor, name: string, changes: PlanChanges): Promise<Plan> {
  const before = await store.getPlan(name);
  const plan = await store.setPlan(name, changes);
  const changed = changesBetween(before && auditView(before), auditView(plan));
  if (Object.keys(changed).length > 0) await audit.record({ actor, action: before ? "plan.updated" : "plan.created", target: `plan:${plan.name}`, changes: changed });
  return plan;
}

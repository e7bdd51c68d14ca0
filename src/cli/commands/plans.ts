import { parseLimit, parsePositive } from "../../config/options.ts";
import { setPlanAudited } from "../../access/plan-service.ts";
import { AuditLog, CLI_ACTOR } from "../../audit/audit-log.ts";
import type { Plan, PlanChanges } from "../../store/store.ts";
import { parseCommandArgs } from "../args.ts";
import { STATE_FLAG_HELP } from "../flag-help.ts";
import type { Command } from "../command.ts";
import { EXIT_OK } from "../io.ts";
import { formatLimit, formatTable } from "../table.ts";
import { withStore } from "../with-store.ts";


function planJson(plan: Plan) {
  return {
    name: plan.name,
    max_batch_size: plan.maxBatchSize,
    monthly_units: plan.monthlyUnits,
    rate_limit: plan.rateLimit,
  };
}

const list: Command = {
  name: "list",
  summary: "list plans",
  help: `Usage: iplookup plans list [--json]

Lists the plans: largest batch, units a month and requests a second.

  --json           print a JSON array
${STATE_FLAG_HELP}`,
  async run(argv, context) {
    const { flags } = parseCommandArgs(argv, { settings: ["state"], booleans: ["json"] });
    const plans = await withStore(flags, context, { create: false, readOnly: true }, (store) => store.listPlans());
    if (flags.json) {
      context.io.out(JSON.stringify(plans.map(planJson)));
    } else {
      const rows = plans.map((plan) => [plan.name, formatLimit(plan.maxBatchSize), formatLimit(plan.monthlyUnits), formatLimit(plan.rateLimit)]);
      context.io.out(formatTable(["PLAN", "MAX BATCH", "UNITS/MONTH", "REQUESTS/S"], rows));
    }
    return EXIT_OK;
  },
};

const set: Command = {
  name: "set",
  summary: "create a plan or change one",
  help: `Usage: iplookup plans set NAME [--max-batch N] [--monthly-units N|unlimited] [--rate-limit N|unlimited]

Creates the plan NAME (all three flags needed) or changes it (a flag left out keeps
its value). Keys on the plan see the change on a running server within a second.

  --max-batch N                 most addresses in one batch request
  --monthly-units N|unlimited   units a key may spend per calendar month (UTC)
  --rate-limit N|unlimited      requests a second per key (burst: one second's worth)
${STATE_FLAG_HELP}`,
  async run(argv, context) {
    const { flags, positionals } = parseCommandArgs(argv, {
      settings: ["state"],
      strings: ["max-batch", "monthly-units", "rate-limit"],
      positionals: [1, 1], arguments: ["NAME"],
    });
    const changes: { -readonly [K in keyof PlanChanges]: PlanChanges[K] } = {};
    if (typeof flags["max-batch"] === "string") changes.maxBatchSize = parsePositive(flags["max-batch"], "--max-batch");
    if (typeof flags["monthly-units"] === "string") changes.monthlyUnits = parseLimit(flags["monthly-units"], "--monthly-units");
    if (typeof flags["rate-limit"] === "string") changes.rateLimit = parseLimit(flags["rate-limit"], "--rate-limit");
    // Through setPlanAudited: the change is recorded in the audit log, as `cli`.
    const plan = await withStore(flags, context, { create: true }, (store) =>
      setPlanAudited(store, new AuditLog(store, () => context.now()), CLI_ACTOR, positionals[0] as string, changes),
    );
    context.io.out(
      `Plan ${plan.name}: max batch ${formatLimit(plan.maxBatchSize)}, ${formatLimit(plan.monthlyUnits)} ${plan.monthlyUnits === 1 ? "unit" : "units"} a month, ${formatLimit(plan.rateLimit)} ${plan.rateLimit === 1 ? "request" : "requests"} a second.`,
    );
    return EXIT_OK;
  },
};

export const PLAN_COMMANDS: readonly Command[] = [list, set];

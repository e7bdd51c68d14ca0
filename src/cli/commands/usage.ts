import { usageReport, type UsageReport } from "../../access/usage-report.ts";
import type { Store } from "../../store/store.ts";
import { parseCommandArgs } from "../args.ts";
import { howToRun } from "../command-name.ts";
import { STATE_FLAG_HELP } from "../flag-help.ts";
import type { Command } from "../command.ts";
import { EXIT_FAILED, EXIT_OK } from "../io.ts";
import { formatLimit, formatTable } from "../table.ts";
import { withStore } from "../with-store.ts";

async function reportsFor(store: Store, id: string | undefined, now: Date): Promise<UsageReport[] | null> {
  const keys = id === undefined ? (await store.listKeys()).filter((key) => !key.revokedAt) : [await store.getKey(id)];
  const reports: UsageReport[] = [];
  for (const key of keys) {
    if (!key) return null;
    const plan = await store.getPlan(key.plan);
    if (plan) reports.push(await usageReport(store, key, plan, now));
  }
  return reports;
}

export const usageCommand: Command = {
  name: "usage",
  summary: "units used this month, per key",
  help: `Usage: iplookup usage [ID] [--json]

Shows the units a key used in the current period (the calendar month, UTC) against
its plan. Without ID: every active key. With ID and --json: the same JSON as
GET /v1/usage answers for that key.

  --json           print JSON
${STATE_FLAG_HELP}`,
  async run(argv, context) {
    const { flags, positionals } = parseCommandArgs(argv, { settings: ["state"], booleans: ["json"], positionals: [0, 1] });
    const id = positionals[0];
    const reports = await withStore(flags, context, { create: false, readOnly: true }, (store) => reportsFor(store, id, context.now()));
    if (!reports) {
      context.io.err(`iplookup: no key ${id} (see '${howToRun(context, "keys list")}')`);
      return EXIT_FAILED;
    }
    if (flags.json) {
      context.io.out(JSON.stringify(id === undefined ? reports : reports[0]));
      return EXIT_OK;
    }
    const rows = reports.map((report) => [
      report.key.id,
      report.key.name,
      report.plan.name,
      formatLimit(report.units.used),
      formatLimit(report.units.limit),
      formatLimit(report.units.remaining),
    ]);
    const period = reports[0]?.period;
    if (period) context.io.out(`Period ${period.start} to ${period.end}`);
    context.io.out(formatTable(["ID", "NAME", "PLAN", "USED", "LIMIT", "REMAINING"], rows));
    return EXIT_OK;
  },
};

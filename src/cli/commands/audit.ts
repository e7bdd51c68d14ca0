import { AuditCursorError, AuditLog, parseAuditCursor } from "../../audit/audit-log.ts";
import { ConfigError } from "../../config/config-error.ts";
import { dayOf, daysBetween, isDayId, spanStart } from "../../store/usage-days.ts";
import { parseCommandArgs } from "../args.ts";
import type { Command } from "../command.ts";
import { STATE_FLAG_HELP } from "../flag-help.ts";
import { EXIT_OK } from "../io.ts";
import { formatTable } from "../table.ts";
import { withStore } from "../with-store.ts";

/** The span shown when none is given: the last 30 days; and the most days at once (as GET /admin/v1/audit). */
const DEFAULT_DAYS = 30;
const MAX_DAYS = 400;
/** The most entries printed at once. */
const LIMIT = 10_000;

export const auditCommand: Command = {
  name: "audit",
  summary: "the audit log: who changed which key, plan, admin token, webhook or correction, and how",
  help: `Usage: iplookup audit [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--before CURSOR] [--json]

Prints the audit log, newest first: every change made with the admin API, the console
or the command line, with its time, actor (an admin token's id, or cli), action, target
and what changed. Secrets are never recorded. At most 10,000 changes are printed at
once; when the span holds more, standard error gives the --before that prints the
next (older) ones.

  --from DAY       the first UTC day, included (default: 29 days before --to, but
                   not before 0001-01-01)
  --to DAY         the last UTC day, included (default: today)
  --before CURSOR  the changes older than those printed before: the cursor standard
                   error (or --json's "next") gave, with the same --from and --to
  --json           print {"entries":[{"at","actor","action","target","changes"}],"next"}, as
                   GET /admin/v1/audit ("next": the --before of the older ones, or null)
${STATE_FLAG_HELP}`,
  async run(argv, context) {
    const { flags } = parseCommandArgs(argv, { settings: ["state"], strings: ["from", "to", "before"], booleans: ["json"] });
    for (const name of ["from", "to"] as const) {
      const value = flags[name];
      if (typeof value === "string" && !isDayId(value)) throw new ConfigError(`--${name}: "${value}" is not a day written YYYY-MM-DD`);
    }
    const before = typeof flags.before === "string" ? flags.before : null;
    if (before !== null && parseAuditCursor(before) === null) throw new ConfigError(`--before: ${new AuditCursorError(before).message}`);
    const to = typeof flags.to === "string" ? flags.to : dayOf(context.now().getTime());
    const from = typeof flags.from === "string" ? flags.from : spanStart(to, DEFAULT_DAYS);
    const span = daysBetween(from, to);
    if (span < 1) throw new ConfigError(`--from ${from} is after --to ${to}`);
    if (span > MAX_DAYS) throw new ConfigError(`--from ${from} --to ${to} is ${span} days; at most ${MAX_DAYS}`);
    const { entries, next } = await withStore(flags, context, { create: false, readOnly: true }, (store) => new AuditLog(store).page(from, to, LIMIT, before));
    if (next !== null) {
      context.io.err(
        `${before === null ? "the newest " : ""}${LIMIT.toLocaleString("en-US")} changes from ${from} to ${to} are shown; there are more, older: iplookup audit --from ${from} --to ${to} --before ${next}`,
      );
    }
    if (flags.json) {
      context.io.out(JSON.stringify({ entries, next }));
    } else if (entries.length === 0) {
      context.io.out(before === null ? `No changes recorded from ${from} to ${to}.` : `No changes recorded from ${from} to ${to} older than ${before}.`);
    } else {
      const rows = entries.map((entry) => [entry.at, entry.actor, entry.action, entry.target, describeChanges(entry.action, entry.changes)]);
      context.io.out(formatTable(["AT", "ACTOR", "ACTION", "TARGET", "CHANGES"], rows));
    }
    return EXIT_OK;
  },
};

/** A plan's limits, whose null is "unlimited". */
const PLAN_LIMITS = new Set(["monthly_units", "rate_limit"]);

/**
 * `plan: free → standard; expires_at: null → 2027-01-01T00:00:00.000Z`, for the table; a
 * creation's fields as `name: value`, a plan's null limit as unlimited (as the console's
 * audit page reads them).
 */
function describeChanges(action: string, changes: Readonly<Record<string, unknown>>): string {
  const created = action.endsWith(".created");
  return Object.entries(changes)
    .map(([name, change]) => {
      const none = action.startsWith("plan.") && PLAN_LIMITS.has(name) ? "unlimited" : "null";
      const { from, to } = (change ?? {}) as { from?: unknown; to?: unknown };
      if (from === undefined && to === undefined) return `${name}: ${JSON.stringify(change)}`;
      if (created && from === null) return `${name}: ${text(to, none)}`;
      return `${name}: ${text(from, none)} → ${text(to, none)}`;
    })
    .join("; ");
}

function text(value: unknown, none: string): string {
  if (value === null || value === undefined) return none;
  return typeof value === "string" ? value : JSON.stringify(value);
}

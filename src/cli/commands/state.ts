import { existsSync } from "node:fs";
import { AuditLog, CLI_ACTOR } from "../../audit/audit-log.ts";
import { ConfigError } from "../../config/config-error.ts";
import { isFilePath } from "../../config/paths.ts";
import { sqliteCompanion } from "../../data-file/sqlite-tables.ts";
import { parseState } from "../../config/settings.ts";
import { heldRows } from "../../store/postgres-schema.ts";
import { peekPostgres } from "../../store/postgres-peek.ts";
import { isPostgresUrl, redactUrl } from "../../store/redact-url.ts";
import { sameState } from "../../store/same-state.ts";
import { checkSnapshot } from "../../store/state-snapshot.ts";
import { StateNotFoundError, StoreError, type StateSnapshot, type Store } from "../../store/store.ts";
import { parseCommandArgs } from "../args.ts";
import { CommandFailed, type Command } from "../command.ts";
import { EXIT_OK } from "../io.ts";
import { withStoreAt } from "../with-store.ts";

const copy: Command = {
  name: "copy",
  summary: "copy keys, plans and usage to another state (SQLite or PostgreSQL)",
  help: `Usage: iplookup state copy --from PATH|URL --to PATH|URL [--replace]

Copies every key (its id, name, plan, times and the hash of its secret), every plan,
all usage (per month and per day), every admin token (its hash), every local
correction, every webhook (with its signing secret; not its pending deliveries) and the
audit log from one state to another: a SQLite file or a PostgreSQL database
(postgres://USER:PASSWORD@HOST/DATABASE), either way, or file to file. Secrets are not
stored, only their hashes, and the hashes are copied: every client's key, and every
admin token, works on the copy as it did. The copy is written in one transaction: all
of it or nothing.

The source must exist and is only read, from one consistent snapshot, so servers may
keep running on it; what they charge after that moment is not in the copy. To move for
good, stop the servers, copy, and start them on the new state.

The destination is created when missing (a SQLite file, or iplookup's tables in an
existing PostgreSQL database). One that holds keys or corrections already is refused,
unless --replace: then its keys (with their controls), plans, usage, admin tokens,
corrections, webhooks and audit log are replaced by the source's.
Without --replace, plans the destination has and the source has not are kept.
--from and --to that name one state, however written (a link to the file, localhost
for 127.0.0.1), are refused.

The copy is recorded in the destination's audit log, after the source's entries: the
action state.copied (state.replaced with --replace), by cli, with the source and what
was copied, counted.

  --from PATH|URL  the state to copy from
  --to PATH|URL    the state to copy to
  --replace        replace what the destination holds`,
  async run(argv, context) {
    const { flags } = parseCommandArgs(argv, { strings: ["from", "to"], booleans: ["replace"] });
    if (flags.from === undefined) throw new ConfigError("--from is required: the state to copy from");
    if (flags.to === undefined) throw new ConfigError("--to is required: the state to copy to");
    const from = parseState(flags.from as string, "--from");
    const to = parseState(flags.to as string, "--to");
    if (await sameState(from, to)) throw new ConfigError(`--from and --to name the same state (${redactUrl(from)})`);
    // A server's -wal is empty after each checkpoint: a state copied there would be
    // taken from under it (SQLite takes what is there for the file's own log).
    const companion = isFilePath(to) ? sqliteCompanion(to) : null;
    if (companion !== null) throw new ConfigError(`--to: ${to} is the ${companion.kind} of the SQLite file ${companion.main}, not a state file; --to names the state file itself`);
    const replace = flags.replace === true;

    const snapshot = await withStoreAt(from, { create: false, readOnly: true }, (source) => source.exportState()).catch((error: unknown) => {
      // The source is named by --from, not --state: the hint names the flag to check.
      if (error instanceof StateNotFoundError) throw new CommandFailed(`${error.message}; check --from (the state to copy from must exist)`);
      throw error;
    });
    // What can be refused is refused before the destination is opened: opening it creates
    // its schema (or file) and migrates an older one, which a refused copy must not leave
    // behind (a SQLite file it created is removed, but PostgreSQL tables are not dropped).
    try {
      checkSnapshot(snapshot);
    } catch (error) {
      if (!(error instanceof StoreError)) throw error;
      throw new StoreError(`${redactUrl(from)} cannot be copied: ${error.message}; nothing was written to ${redactUrl(to)}`, { cause: error });
    }
    if (!replace && isPostgresUrl(to)) {
      // Unread (unreachable, from a newer iplookup): opening it below says why.
      const held = await peekPostgres(to, (sql) => heldRows(sql, redactUrl(to))).catch(() => null);
      if (held) refuseHeld(held, from, to);
    } else if (!replace && isFilePath(to) && existsSync(to)) {
      // Read as a reading command reads it (no migration, nothing changed), so that a
      // backup of an older iplookup given as --to by mistake is refused as it was.
      // Unread (not a state file, from a newer iplookup): opening it below says why.
      const held = await withStoreAt(to, { create: false, readOnly: true }, heldBy).catch(() => null);
      if (held) refuseHeld(held, from, to);
    }
    await withStoreAt(to, { create: true }, async (destination) => {
      if (!replace) refuseHeld(await heldBy(destination), from, to);
      // importState checks again in its transaction, should a key appear meanwhile.
      const audit = new AuditLog(destination, () => context.now());
      await destination.importState(snapshot, {
        replace,
        audit: (copied) =>
          audit.change({ actor: CLI_ACTOR, action: replace ? "state.replaced" : "state.copied", target: "state", changes: { source: redactUrl(from), ...counts(copied) } }),
      });
    });
    context.io.out(`Copied ${describe(snapshot)} from ${redactUrl(from)} to ${redactUrl(to)}${replace ? ", replacing what it held" : ""}.`);
    return EXIT_OK;
  },
};

/** What a destination holds that a copy without --replace refuses (see refuseHeld). */
async function heldBy(store: Store): Promise<{ keys: number; corrections: number }> {
  return { keys: (await store.listKeys()).length, corrections: (await store.listCorrections()).length };
}

/** Refuses a copy without --replace into a destination that holds keys or corrections. */
function refuseHeld({ keys, corrections }: { keys: number; corrections: number }, from: string, to: string): void {
  if (keys === 0 && corrections === 0) return;
  const held = [
    ...(keys > 0 ? [`${keys} key${keys === 1 ? "" : "s"}`] : []),
    ...(corrections > 0 ? [`${corrections} correction${corrections === 1 ? "" : "s"}`] : []),
  ].join(" and ");
  throw new ConfigError(
    `${redactUrl(to)} holds ${held} already; copy into a new or empty state, or add --replace to replace its keys, plans, usage, admin tokens, corrections, webhooks and audit log with those of ${redactUrl(from)}`,
  );
}

/** What a snapshot holds, counted: what the copy's audit entry records, and describe() tells. */
function counts(snapshot: StateSnapshot) {
  return {
    plans: snapshot.plans.length,
    keys: snapshot.keys.length,
    revoked_keys: snapshot.keys.filter((key) => key.revokedAt !== null).length,
    monthly_usage_rows: snapshot.usage.length,
    units: snapshot.usage.reduce((sum, row) => sum + row.used, 0),
    daily_usage_rows: snapshot.days?.length ?? 0,
    admin_tokens: snapshot.adminTokens?.length ?? 0,
    corrections: snapshot.corrections?.length ?? 0,
    webhooks: snapshot.webhooks?.length ?? 0,
    audit_entries: snapshot.audit?.length ?? 0,
  };
}

/**
 * "3 plans, 12 keys (2 revoked), 30 monthly usage rows (1,234 units), 41 daily usage rows,
 * 1 admin token, 2 corrections, 1 webhook and 57 audit entries".
 */
function describe(snapshot: StateSnapshot): string {
  const count = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString("en")} ${n === 1 ? one : many}`;
  const held = counts(snapshot);
  const parts = [
    count(held.plans, "plan"),
    `${count(held.keys, "key")}${held.revoked_keys > 0 ? ` (${held.revoked_keys.toLocaleString("en")} revoked)` : ""}`,
    `${count(held.monthly_usage_rows, "monthly usage row")} (${count(held.units, "unit")})`,
    count(held.daily_usage_rows, "daily usage row"),
  ];
  const last = [count(held.admin_tokens, "admin token")];
  // Named only when there are some, so a copy of a state without them reads as before.
  if (held.corrections > 0) last.push(count(held.corrections, "correction"));
  if (held.webhooks > 0) last.push(count(held.webhooks, "webhook"));
  if (held.audit_entries > 0) last.push(count(held.audit_entries, "audit entry", "audit entries"));
  return [...parts, ...last.slice(0, -1)].join(", ") + ` and ${last.at(-1)}`;
}

export const STATE_COMMANDS: readonly Command[] = [copy];

import { ConfigError } from "../../config/config-error.ts";
import { ControlValueError, controlsFromJson, parseGrace, type ControlJson } from "../../access/key-control-values.ts";
import { keyJson } from "../../access/key-json.ts";
import { KeyService } from "../../access/key-service.ts";
import { AuditLog, CLI_ACTOR } from "../../audit/audit-log.ts";
import { StoreError, type ApiKey, type IssuedKey, type KeyChanges, type Store } from "../../store/store.ts";
import { parseCommandArgs } from "../args.ts";
import { howToRun } from "../command-name.ts";
import { STATE_FLAG_HELP } from "../flag-help.ts";
import { CommandFailed, type CliContext, type Command } from "../command.ts";
import { EXIT_OK } from "../io.ts";
import { formatTable } from "../table.ts";
import { withStore } from "../with-store.ts";

/**
 * The key changes of the command line: made through KeyService, recorded in the audit log
 * as `cli` and announced to the webhooks, with the change, in one transaction.
 */
function keyService(store: Store, context: CliContext): KeyService {
  return new KeyService(store, new AuditLog(store, () => context.now()), { now: () => context.now() });
}

/** The control flags of `keys create` and `keys update`. */
const CONTROL_FLAGS = ["expires-at", "allowed-cidrs", "allowed-origins", "metadata"] as const;

const CONTROL_HELP = `  --expires-at TIME          RFC 3339 (2027-01-01T00:00:00Z): from then on the key is
                             refused (401 key_expired)
  --allowed-cidrs LIST       comma-separated blocks or addresses (203.0.113.0/24,2001:db8::/32)
                             the client's address (as /v1/me sees it) must lie in (403)
  --allowed-origins LIST     comma-separated browser origins (https://app.example.com), each
                             in full (no wildcards); a request from another Origin is
                             refused (403), a listed one gets CORS headers
  --metadata JSON            your own JSON object, at most 1 KiB`;

/**
 * The controls the flags ask for. "never" (--expires-at), "any" (the lists) and "none"
 * (--metadata) clear one, for \`keys update\`. Bad values are usage errors (exit 2).
 */
function controlFlags(flags: Readonly<Record<string, unknown>>, nowMs: number): KeyChanges {
  const json: { -readonly [K in keyof ControlJson]: ControlJson[K] } = {};
  const text = (name: string) => (typeof flags[name] === "string" ? (flags[name] as string).trim() : undefined);
  // A list with nothing in it (an empty shell variable) is refused, not read as no
  // allowlist: that takes the word "any", so a key is never left open by a slip.
  const list = (name: string, value: string) => {
    const items = value.split(",").map((item) => item.trim()).filter((item) => item !== "");
    if (items.length === 0) throw new ConfigError(`--${name}: empty; give one or more, comma-separated${name === "allowed-cidrs" ? " (203.0.113.0/24,2001:db8::/32)" : " (https://app.example.com)"}, or "any" for none`);
    return items;
  };
  const expires = text("expires-at");
  if (expires !== undefined) json.expires_at = expires === "never" ? null : expires;
  const cidrs = text("allowed-cidrs");
  if (cidrs !== undefined) json.allowed_cidrs = cidrs === "any" ? null : list("allowed-cidrs", cidrs);
  const origins = text("allowed-origins");
  if (origins !== undefined) json.allowed_origins = origins === "any" ? null : list("allowed-origins", origins);
  const metadata = text("metadata");
  if (metadata !== undefined) {
    if (metadata === "none") json.metadata = null;
    else {
      try {
        json.metadata = JSON.parse(metadata) as Record<string, unknown>;
      } catch {
        throw new ConfigError(`--metadata: not JSON: ${metadata.slice(0, 80)}`);
      }
    }
  }
  try {
    return controlsFromJson(json, nowMs);
  } catch (error) {
    if (error instanceof ControlValueError) throw new ConfigError(`--${error.message.replace(/^([a-z_]+):/, (_, field: string) => `${field.replace(/_/g, "-")}:`)}`);
    throw error;
  }
}

function printIssued(issued: IssuedKey, json: boolean, context: CliContext, verb: string): void {
  if (json) {
    const { id, name, plan, graceUntil } = issued.key;
    context.io.out(JSON.stringify({ id, key: issued.secret, name, plan, ...(graceUntil ? { grace_until: graceUntil } : {}) }));
    return;
  }
  context.io.out(`${verb} key ${issued.key.id} (${issued.key.name}, plan ${issued.key.plan}).`);
  if (issued.key.graceUntil) context.io.out(`The old secret keeps working until ${issued.key.graceUntil}.`);
  context.io.out(`Secret (shown only now; store it safely):\n\n  ${issued.secret}\n`);
  context.io.out(`Use it as: Authorization: Bearer ${issued.secret}`);
}

const create: Command = {
  name: "create",
  summary: "create a key and print its secret once",
  help: `Usage: iplookup keys create --name NAME [--plan free] [--expires-at TIME] [--allowed-cidrs LIST]
                            [--allowed-origins LIST] [--metadata JSON] [--json]

Creates an API key on a plan and prints its secret. Only a hash of the secret is
stored: it cannot be shown again (rotate the key to get a new one).

  --name NAME                a label for the key (who or what uses it)
  --plan PLAN                the key's plan (default: free; see 'iplookup plans list')
${CONTROL_HELP}
  --json                     print {"id","key","name","plan"}
${STATE_FLAG_HELP}`,
  async run(argv, context) {
    const { flags } = parseCommandArgs(argv, { settings: ["state"], strings: ["name", "plan", ...CONTROL_FLAGS], booleans: ["json"] });
    const name = typeof flags.name === "string" ? flags.name.trim() : "";
    if (name === "") throw new ConfigError("--name is required and must not be empty");
    const plan = typeof flags.plan === "string" ? flags.plan : "free";
    const changes = controlFlags(flags, context.now().getTime());
    const controls = { expiresAt: changes.expiresAt ?? null, allowedCidrs: changes.allowedCidrs ?? null, allowedOrigins: changes.allowedOrigins ?? null, metadata: changes.metadata ?? null };
    const issued = await withStore(flags, context, { create: true }, async (store) => {
      // Asked before the store is, which refuses it as a bad value: an unknown plan is a
      // wrong name in the state, exit 1, as keys update and keys set-plan say it.
      if (!(await store.getPlan(plan))) throw new CommandFailed(`there is no plan "${plan}" (see '${howToRun(context, "plans list")}')`);
      return keyService(store, context).create(CLI_ACTOR, name, plan, controls);
    });
    printIssued(issued, flags.json === true, context, "Created");
    return EXIT_OK;
  },
};

const list: Command = {
  name: "list",
  summary: "list keys (never their secrets)",
  help: `Usage: iplookup keys list [--json]

Lists every key, revoked ones included, with its plan. Secrets are never shown.

  --json           print a JSON array
${STATE_FLAG_HELP}`,
  async run(argv, context) {
    const { flags } = parseCommandArgs(argv, { settings: ["state"], booleans: ["json"] });
    const keys = await withStore(flags, context, { create: false, readOnly: true }, (store) => store.listKeys());
    if (flags.json) {
      context.io.out(JSON.stringify(keys.map(keyJson)));
    } else if (keys.length === 0) {
      context.io.out(`No keys yet. Create one with: ${howToRun(context, "keys create --name NAME")}`);
    } else {
      const rows = keys.map((key) => [key.id, key.name, key.plan, key.createdAt, statusOf(key, context.now()), controlsSummary(key)]);
      context.io.out(formatTable(["ID", "NAME", "PLAN", "CREATED", "STATUS", "CONTROLS"], rows));
    }
    return EXIT_OK;
  },
};

function statusOf(key: ApiKey, now: Date): string {
  if (key.revokedAt) return `revoked ${key.revokedAt}`;
  const expires = key.controls?.expiresAt;
  if (expires) return Date.parse(expires) <= now.getTime() ? `expired ${expires}` : `active, expires ${expires}`;
  return "active";
}

/** The key's allowlists in a few words, for the table. */
function controlsSummary(key: ApiKey): string {
  const parts: string[] = [];
  if (key.controls?.allowedCidrs) parts.push(`cidrs ${key.controls.allowedCidrs.join(",")}`);
  if (key.controls?.allowedOrigins) parts.push(`origins ${key.controls.allowedOrigins.join(",")}`);
  if (key.controls?.metadata) parts.push("metadata");
  if (key.graceUntil && !key.revokedAt) parts.push(`old secret until ${key.graceUntil}`);
  return parts.join("; ");
}

function noSuchKey(id: string, context: CliContext): CommandFailed {
  return new CommandFailed(`no key ${id} (see '${howToRun(context, "keys list")}')`);
}

/**
 * How each command that changes a key refuses a revoked one, after "key ID (NAME) was
 * revoked on TIME". Revocation is final: only a second revoke finds its work done
 * already; the others say what a revoked key cannot have (as the store says it of a key
 * revoked while they ran).
 */
const REVOKED_REFUSALS = {
  revoke: " already",
  rotate: "; a revoked key cannot be rotated",
  "set-plan": "; a revoked key keeps its plan",
  update: "; a revoked key cannot be changed",
} as const;

function revokedKey(key: ApiKey, command: keyof typeof REVOKED_REFUSALS): CommandFailed {
  return new CommandFailed(`key ${key.id} (${key.name}) was revoked on ${key.revokedAt}${REVOKED_REFUSALS[command]}`);
}

/** The key `command` changes: refused when it does not exist or is revoked. */
async function activeKey(store: Store, id: string, context: CliContext, command: keyof typeof REVOKED_REFUSALS): Promise<ApiKey> {
  const key = await store.getKey(id);
  if (!key) throw noSuchKey(id, context);
  if (key.revokedAt) throw revokedKey(key, command);
  return key;
}

const revoke: Command = {
  name: "revoke",
  summary: "revoke a key (a running server refuses it within a second)",
  help: `Usage: iplookup keys revoke ID

Revokes a key for good; a running server refuses it within a second. An unknown ID, or
a key revoked already, exits 1 and changes nothing.
${STATE_FLAG_HELP}`,
  async run(argv, context) {
    const { flags, positionals } = parseCommandArgs(argv, { settings: ["state"], positionals: [1, 1], arguments: ["ID"] });
    const id = positionals[0] as string;
    const key = await withStore(flags, context, { create: false }, async (store) => {
      await activeKey(store, id, context, "revoke");
      // The check above read the key before the revoking transaction: a revocation made in
      // between (another revoke, the admin API) is told by the revoke itself.
      const revocation = await keyService(store, context).revoke(CLI_ACTOR, id);
      if (!revocation) throw noSuchKey(id, context);
      if (!revocation.revoked) throw revokedKey(revocation.key, "revoke");
      return revocation.key;
    });
    context.io.out(`Revoked key ${key.id} (${key.name}).`);
    return EXIT_OK;
  },
};

const rotate: Command = {
  name: "rotate",
  summary: "give a key a new secret; the old one stops working (at once, or after --grace)",
  help: `Usage: iplookup keys rotate ID [--grace DURATION] [--json]

Gives an active key a new secret and prints it once. The key keeps its id, plan and
usage; the new secret works at once, and the old one stops working on a running server
within a second, or, with --grace, when the grace ends (a secret kept by an earlier
grace stops now). An unknown ID, or a revoked key, exits 1 and changes nothing.

  --grace DURATION how long the old secret keeps working: 24h, 90m, 7d, 1h30m (at most 30d)
  --json           print {"id","key","name","plan"} (and "grace_until" with --grace)
${STATE_FLAG_HELP}`,
  async run(argv, context) {
    const { flags, positionals } = parseCommandArgs(argv, { settings: ["state"], strings: ["grace"], booleans: ["json"], positionals: [1, 1], arguments: ["ID"] });
    const id = positionals[0] as string;
    let graceMs = 0;
    if (typeof flags.grace === "string") {
      try {
        graceMs = parseGrace(flags.grace, "--grace");
      } catch (error) {
        throw error instanceof ControlValueError ? new ConfigError(error.message) : error;
      }
    }
    const issued = await withStore(flags, context, { create: false }, async (store) => {
      await activeKey(store, id, context, "rotate");
      const rotated = await keyService(store, context).rotate(CLI_ACTOR, id, graceMs);
      if (!rotated) throw new CommandFailed(`key ${id} was revoked or deleted meanwhile; nothing changed`);
      return rotated;
    });
    printIssued(issued, flags.json === true, context, "Rotated");
    return EXIT_OK;
  },
};

const setPlan: Command = {
  name: "set-plan",
  summary: "move a key to another plan; its secret stays",
  help: `Usage: iplookup keys set-plan ID PLAN [--json]

Moves an active key to another plan. The key keeps its secret, id and this month's
usage, now counted against the new plan's limits; a running server applies the new
plan within a second. An unknown ID or PLAN, or a revoked key, exits 1 and changes
nothing.

  --json           print the key as 'keys list --json' does
${STATE_FLAG_HELP}`,
  async run(argv, context) {
    const { flags, positionals } = parseCommandArgs(argv, { settings: ["state"], booleans: ["json"], positionals: [2, 2], arguments: ["ID", "PLAN"] });
    const [id, plan] = positionals as [string, string];
    const outcome = await withStore(flags, context, { create: false }, async (store) => {
      const key = await activeKey(store, id, context, "set-plan");
      if (!(await store.getPlan(plan))) throw new CommandFailed(`there is no plan "${plan}" (see '${howToRun(context, "plans list")}')`);
      if (key.plan === plan) return { key, changed: false };
      let moved: ApiKey | null;
      try {
        // Checked again under the write lock: a revocation made meanwhile refuses the move.
        moved = await keyService(store, context).update(CLI_ACTOR, id, { plan });
      } catch (error) {
        throw error instanceof StoreError ? new CommandFailed(error.message) : error;
      }
      if (!moved) throw noSuchKey(id, context);
      return { key: moved, changed: true };
    });
    if (flags.json) context.io.out(JSON.stringify(keyJson(outcome.key)));
    else if (outcome.changed) context.io.out(`Key ${id} (${outcome.key.name}) is now on plan ${plan}; its secret is unchanged.`);
    else context.io.out(`Key ${id} (${outcome.key.name}) is on plan ${plan} already; nothing changed.`);
    return EXIT_OK;
  },
};

const update: Command = {
  name: "update",
  summary: "change a key's plan, expiry, allowlists or metadata; its secret stays",
  help: `Usage: iplookup keys update ID [--plan PLAN] [--expires-at TIME|never] [--allowed-cidrs LIST|any]
                           [--allowed-origins LIST|any] [--metadata JSON|none] [--json]

Changes an active key in one step; what is left out stays. A running server applies the
change within a second. An unknown ID or PLAN, or a revoked key, exits 1 and changes
nothing; a bad value exits 2.

  --plan PLAN                move the key to this plan
${CONTROL_HELP}
                             (never, any, none: remove that control)
  --json                     print the key as 'keys list --json' does
${STATE_FLAG_HELP}`,
  async run(argv, context) {
    const { flags, positionals } = parseCommandArgs(argv, { settings: ["state"], strings: ["plan", ...CONTROL_FLAGS], booleans: ["json"], positionals: [1, 1], arguments: ["ID"] });
    const id = positionals[0] as string;
    const changes: KeyChanges = { ...controlFlags(flags, context.now().getTime()), ...(typeof flags.plan === "string" ? { plan: flags.plan } : {}) };
    if (Object.keys(changes).length === 0) throw new ConfigError("nothing to change: give --plan, --expires-at, --allowed-cidrs, --allowed-origins or --metadata");
    const key = await withStore(flags, context, { create: false }, async (store) => {
      await activeKey(store, id, context, "update");
      if (changes.plan !== undefined && !(await store.getPlan(changes.plan))) throw new CommandFailed(`there is no plan "${changes.plan}" (see '${howToRun(context, "plans list")}')`);
      let updated: ApiKey | null;
      try {
        updated = await keyService(store, context).update(CLI_ACTOR, id, changes);
      } catch (error) {
        throw error instanceof StoreError ? new CommandFailed(error.message) : error;
      }
      if (!updated) throw noSuchKey(id, context);
      return updated;
    });
    if (flags.json) context.io.out(JSON.stringify(keyJson(key)));
    else context.io.out(`Key ${key.id} (${key.name}): plan ${key.plan}${controlsSummary(key) ? `; ${controlsSummary(key)}` : ""}${key.controls?.expiresAt ? `; expires ${key.controls.expiresAt}` : ""}.`);
    return EXIT_OK;
  },
};

export const KEY_COMMANDS: readonly Command[] = [create, list, update, revoke, rotate, setPlan];

import { ConfigError } from "../../config/config-error.ts";
import { StoreError, type ApiKey, type IssuedKey, type Store } from "../../store/store.ts";
import { parseCommandArgs } from "../args.ts";
import { howToRun } from "../command-name.ts";
import { STATE_FLAG_HELP } from "../flag-help.ts";
import { CommandFailed, type CliContext, type Command } from "../command.ts";
import { EXIT_OK } from "../io.ts";
import { formatTable } from "../table.ts";
import { withStore } from "../with-store.ts";

function keyJson(key: ApiKey) {
  return { id: key.id, name: key.name, plan: key.plan, created_at: key.createdAt, revoked_at: key.revokedAt };
}

function printIssued(issued: IssuedKey, json: boolean, context: CliContext, verb: string): void {
  if (json) {
    const { id, name, plan } = issued.key;
    context.io.out(JSON.stringify({ id, key: issued.secret, name, plan }));
    return;
  }
  context.io.out(`${verb} key ${issued.key.id} (${issued.key.name}, plan ${issued.key.plan}).`);
  context.io.out(`Secret (shown only now; store it safely):\n\n  ${issued.secret}\n`);
  context.io.out(`Use it as: Authorization: Bearer ${issued.secret}`);
}

const create: Command = {
  name: "create",
  summary: "create a key and print its secret once",
  help: `Usage: iplookup keys create --name NAME [--plan free] [--json]

Creates an API key on a plan and prints its secret. Only a hash of the secret is
stored: it cannot be shown again (rotate the key to get a new one).

  --name NAME      a label for the key (who or what uses it)
  --plan PLAN      the key's plan (default: free; see 'iplookup plans list')
  --json           print {"id","key","name","plan"}
${STATE_FLAG_HELP}`,
  async run(argv, context) {
    const { flags } = parseCommandArgs(argv, { settings: ["state"], strings: ["name", "plan"], booleans: ["json"] });
    const name = typeof flags.name === "string" ? flags.name.trim() : "";
    if (name === "") throw new ConfigError("--name is required and must not be empty");
    const plan = typeof flags.plan === "string" ? flags.plan : "free";
    const issued = await withStore(flags, context, { create: true }, (store) => store.createKey(name, plan));
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
    const keys = await withStore(flags, context, { create: false }, (store) => store.listKeys());
    if (flags.json) {
      context.io.out(JSON.stringify(keys.map(keyJson)));
    } else if (keys.length === 0) {
      context.io.out(`No keys yet. Create one with: ${howToRun(context, "keys create --name NAME")}`);
    } else {
      const rows = keys.map((key) => [key.id, key.name, key.plan, key.createdAt, key.revokedAt ? `revoked ${key.revokedAt}` : "active"]);
      context.io.out(formatTable(["ID", "NAME", "PLAN", "CREATED", "STATUS"], rows));
    }
    return EXIT_OK;
  },
};

function noSuchKey(id: string, context: CliContext): CommandFailed {
  return new CommandFailed(`no key ${id} (see '${howToRun(context, "keys list")}')`);
}

/** The key a command changes: refused when it does not exist or is revoked. */
async function activeKey(store: Store, id: string, context: CliContext): Promise<ApiKey> {
  const key = await store.getKey(id);
  if (!key) throw noSuchKey(id, context);
  if (key.revokedAt) throw new CommandFailed(`key ${id} (${key.name}) was revoked on ${key.revokedAt} already`);
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
    const { flags, positionals } = parseCommandArgs(argv, { settings: ["state"], positionals: [1, 1] });
    const id = positionals[0] as string;
    const key = await withStore(flags, context, { create: false }, async (store) => {
      await activeKey(store, id, context);
      // Null only if the key was deleted in between; a revocation in between is harmless.
      const revoked = await store.revokeKey(id);
      if (!revoked) throw noSuchKey(id, context);
      return revoked;
    });
    context.io.out(`Revoked key ${key.id} (${key.name}).`);
    return EXIT_OK;
  },
};

const rotate: Command = {
  name: "rotate",
  summary: "give a key a new secret; the old one stops working",
  help: `Usage: iplookup keys rotate ID [--json]

Gives an active key a new secret and prints it once. The key keeps its id, plan and
usage; the old secret stops working on a running server within a second. An unknown ID,
or a revoked key, exits 1 and changes nothing.

  --json           print {"id","key","name","plan"}
${STATE_FLAG_HELP}`,
  async run(argv, context) {
    const { flags, positionals } = parseCommandArgs(argv, { settings: ["state"], booleans: ["json"], positionals: [1, 1] });
    const id = positionals[0] as string;
    const issued = await withStore(flags, context, { create: false }, async (store) => {
      await activeKey(store, id, context);
      const rotated = await store.rotateKey(id);
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

  --json           print the key: {"id","name","plan","created_at","revoked_at"}
${STATE_FLAG_HELP}`,
  async run(argv, context) {
    const { flags, positionals } = parseCommandArgs(argv, { settings: ["state"], booleans: ["json"], positionals: [2, 2] });
    const [id, plan] = positionals as [string, string];
    const outcome = await withStore(flags, context, { create: false }, async (store) => {
      const key = await activeKey(store, id, context);
      if (!(await store.getPlan(plan))) throw new CommandFailed(`there is no plan "${plan}" (see '${howToRun(context, "plans list")}')`);
      if (key.plan === plan) return { key, changed: false };
      let moved: ApiKey | null;
      try {
        // Checked again under the write lock: a revocation made meanwhile refuses the move.
        moved = await store.setKeyPlan(id, plan);
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

export const KEY_COMMANDS: readonly Command[] = [create, list, revoke, rotate, setPlan];

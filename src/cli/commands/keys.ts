import { ConfigError } from "../../config/config-error.ts";
import type { ApiKey, IssuedKey } from "../../store/store.ts";
import { parseCommandArgs } from "../args.ts";
import { STATE_FLAG_HELP } from "../flag-help.ts";
import type { CliContext, Command } from "../command.ts";
import { EXIT_FAILED, EXIT_OK } from "../io.ts";
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
    const issued = await withStore(flags, context, (store) => store.createKey(name, plan));
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
    const keys = await withStore(flags, context, (store) => store.listKeys());
    if (flags.json) {
      context.io.out(JSON.stringify(keys.map(keyJson)));
    } else if (keys.length === 0) {
      context.io.out("No keys yet. Create one with: iplookup keys create --name NAME");
    } else {
      const rows = keys.map((key) => [key.id, key.name, key.plan, key.createdAt, key.revokedAt ? `revoked ${key.revokedAt}` : "active"]);
      context.io.out(formatTable(["ID", "NAME", "PLAN", "CREATED", "STATUS"], rows));
    }
    return EXIT_OK;
  },
};

const revoke: Command = {
  name: "revoke",
  summary: "revoke a key (a running server refuses it within a second)",
  help: `Usage: iplookup keys revoke ID

Revokes a key for good; a running server refuses it within a second.
${STATE_FLAG_HELP}`,
  async run(argv, context) {
    const { flags, positionals } = parseCommandArgs(argv, { settings: ["state"], positionals: [1, 1] });
    const id = positionals[0] as string;
    const key = await withStore(flags, context, (store) => store.revokeKey(id));
    if (!key) {
      context.io.err(`iplookup: no key ${id} (see 'iplookup keys list')`);
      return EXIT_FAILED;
    }
    context.io.out(`Revoked key ${key.id} (${key.name}).`);
    return EXIT_OK;
  },
};

const rotate: Command = {
  name: "rotate",
  summary: "give a key a new secret; the old one stops working",
  help: `Usage: iplookup keys rotate ID [--json]

Gives an active key a new secret and prints it once. The key keeps its id, plan and
usage; the old secret stops working on a running server within a second.

  --json           print {"id","key","name","plan"}
${STATE_FLAG_HELP}`,
  async run(argv, context) {
    const { flags, positionals } = parseCommandArgs(argv, { settings: ["state"], booleans: ["json"], positionals: [1, 1] });
    const id = positionals[0] as string;
    const issued = await withStore(flags, context, (store) => store.rotateKey(id));
    if (!issued) {
      context.io.err(`iplookup: no active key ${id} (see 'iplookup keys list')`);
      return EXIT_FAILED;
    }
    printIssued(issued, flags.json === true, context, "Rotated");
    return EXIT_OK;
  },
};

export const KEY_COMMANDS: readonly Command[] = [create, list, revoke, rotate];

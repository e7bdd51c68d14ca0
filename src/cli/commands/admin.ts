import { ConfigError } from "../../config/config-error.ts";
import { createAdminTokenAudited, revokeAdminTokenAudited } from "../../access/admin-token-service.ts";
import { AuditLog, CLI_ACTOR } from "../../audit/audit-log.ts";
import type { AdminToken } from "../../store/store.ts";
import { parseCommandArgs } from "../args.ts";
import { howToRun } from "../command-name.ts";
import { CommandFailed, type Command } from "../command.ts";
import { STATE_FLAG_HELP } from "../flag-help.ts";
import { EXIT_OK } from "../io.ts";
import { formatTable } from "../table.ts";
import { withStore } from "../with-store.ts";

function tokenJson(token: AdminToken) {
  return { id: token.id, name: token.name, created_at: token.createdAt, revoked_at: token.revokedAt, read_only: token.readOnly === true };
}

const create: Command = {
  name: "create",
  summary: "create an admin token and print it once",
  help: `Usage: iplookup admin create --name NAME [--read-only] [--json]

Creates a token for the admin API and the console (serve's --admin-port) and prints
it. Only a hash is stored: it cannot be shown again. An admin token is not an API key:
neither is accepted in place of the other.

  --name NAME      a label for the token (who holds it)
  --read-only      the token may only read (GET): any change answers 403 read_only_token
  --json           print {"id","token","name"} ("read_only": true with --read-only)
${STATE_FLAG_HELP}`,
  async run(argv, context) {
    const { flags } = parseCommandArgs(argv, { settings: ["state"], strings: ["name"], booleans: ["json", "read-only"] });
    const name = typeof flags.name === "string" ? flags.name.trim() : "";
    if (name === "") throw new ConfigError("--name is required and must not be empty");
    const readOnly = flags["read-only"] === true;
    const issued = await withStore(flags, context, { create: true }, (store) =>
      createAdminTokenAudited(store, new AuditLog(store, () => context.now()), CLI_ACTOR, name, readOnly),
    );
    if (flags.json) {
      context.io.out(JSON.stringify({ id: issued.token.id, token: issued.secret, name: issued.token.name, ...(readOnly ? { read_only: true } : {}) }));
    } else {
      context.io.out(`Created ${readOnly ? "read-only " : ""}admin token ${issued.token.id} (${issued.token.name}).`);
      context.io.out(`Token (shown only now; store it safely):\n\n  ${issued.secret}\n`);
      context.io.out(`With serve's default admin listener, the console is http://127.0.0.1:8081/console#token=${issued.secret}`);
      context.io.out(`(the part after # never leaves the browser); the admin API takes it as: Authorization: Bearer ${issued.secret}`);
    }
    return EXIT_OK;
  },
};

const list: Command = {
  name: "list",
  summary: "list admin tokens (never the tokens themselves)",
  help: `Usage: iplookup admin list [--json]

Lists every admin token, revoked ones included. The tokens themselves are never shown.

  --json           print a JSON array
${STATE_FLAG_HELP}`,
  async run(argv, context) {
    const { flags } = parseCommandArgs(argv, { settings: ["state"], booleans: ["json"] });
    const tokens = await withStore(flags, context, { create: false, readOnly: true }, (store) => store.listAdminTokens());
    if (flags.json) {
      context.io.out(JSON.stringify(tokens.map(tokenJson)));
    } else if (tokens.length === 0) {
      context.io.out(`No admin tokens yet. Create one with: ${howToRun(context, "admin create --name NAME")}`);
    } else {
      const rows = tokens.map((token) => [token.id, token.name, token.readOnly ? "read-only" : "read-write", token.createdAt, token.revokedAt ? `revoked ${token.revokedAt}` : "active"]);
      context.io.out(formatTable(["ID", "NAME", "ACCESS", "CREATED", "STATUS"], rows));
    }
    return EXIT_OK;
  },
};

const revoke: Command = {
  name: "revoke",
  summary: "revoke an admin token (refused at once by a running server)",
  help: `Usage: iplookup admin revoke ID

Revokes an admin token for good; the admin API refuses it from its next request. An
unknown ID, or a token revoked already, exits 1 and changes nothing.
${STATE_FLAG_HELP}`,
  async run(argv, context) {
    const { flags, positionals } = parseCommandArgs(argv, { settings: ["state"], positionals: [1, 1], arguments: ["ID"] });
    const id = positionals[0] as string;
    const revokedAlready = (token: AdminToken) => new CommandFailed(`admin token ${token.id} (${token.name}) was revoked on ${token.revokedAt} already`);
    const token = await withStore(flags, context, { create: false }, async (store) => {
      const found = await store.getAdminToken(id);
      if (!found) throw new CommandFailed(`no admin token ${id} (see '${howToRun(context, "admin list")}')`);
      if (found.revokedAt) throw revokedAlready(found);
      // A revocation made since the read above (another admin revoke) is told by the revoke itself.
      const revocation = await revokeAdminTokenAudited(store, new AuditLog(store, () => context.now()), CLI_ACTOR, id);
      if (!revocation) throw new CommandFailed(`no admin token ${id}`);
      if (!revocation.revoked) throw revokedAlready(revocation.token);
      return revocation.token;
    });
    context.io.out(`Revoked admin token ${token.id} (${token.name}).`);
    return EXIT_OK;
  },
};

export const ADMIN_COMMANDS: readonly Command[] = [create, list, revoke];

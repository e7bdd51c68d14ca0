import { Database } from "bun:sqlite";
import { chmodSync, existsSync } from "node:fs";
import { ConfigError } from "../../config/config-error.ts";
import { readSetting } from "../../config/settings.ts";
import { parseCommandArgs } from "../args.ts";
import { STATE_FLAG_HELP } from "../flag-help.ts";
import type { Command } from "../command.ts";
import { EXIT_OK } from "../io.ts";

export const backupCommand: Command = {
  name: "backup",
  summary: "copy the state file consistently, while the server runs",
  help: `Usage: iplookup backup FILE [--state PATH]

Writes a consistent copy of the state file (keys, plans, usage) to FILE, which must not
exist yet. Safe while servers are running: SQLite's VACUUM INTO reads one snapshot,
and writers carry on meanwhile.

${STATE_FLAG_HELP}`,
  async run(argv, context) {
    const { flags, positionals } = parseCommandArgs(argv, { settings: ["state"], positionals: [1, 1] });
    const target = positionals[0] as string;
    const state = readSetting("state", flags, context.env);
    if (!existsSync(state)) throw new ConfigError(`there is no state file at ${state}`);
    if (existsSync(target)) throw new ConfigError(`${target} exists already; choose a new file`);
    const db = new Database(state, { readonly: true });
    try {
      db.run("PRAGMA busy_timeout = 10000");
      db.query("VACUUM INTO ?1").run(target);
    } finally {
      db.close();
    }
    chmodSync(target, 0o600);
    context.io.out(`Backed up ${state} to ${target}.`);
    return EXIT_OK;
  },
};

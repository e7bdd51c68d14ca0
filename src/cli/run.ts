import { BUILD_DATE, VERSION } from "../build-info.ts";
import { ConfigError } from "../config/config-error.ts";
import { redactSecrets } from "../importer/fetch/locations.ts";
import { StateNotFoundError, StoreError } from "../store/store.ts";
import { UnknownFlagError } from "./args.ts";
import { howToRun } from "./command-name.ts";
import { nearestName } from "./nearest.ts";
import { CommandFailed, type CliContext, type Command } from "./command.ts";
import { ADMIN_COMMANDS } from "./commands/admin.ts";
import { auditCommand } from "./commands/audit.ts";
import { asnCommand } from "./commands/asn.ts";
import { CONFIG_COMMANDS } from "./commands/config.ts";
import { backupCommand } from "./commands/backup.ts";
import { CORRECTION_COMMANDS } from "./commands/corrections.ts";
import { DATA_COMMANDS } from "./commands/data.ts";
import { KEY_COMMANDS } from "./commands/keys.ts";
import { lookupCommand } from "./commands/lookup.ts";
import { PLAN_COMMANDS } from "./commands/plans.ts";
import { serveCommand } from "./commands/serve.ts";
import { STATE_COMMANDS } from "./commands/state.ts";
import { usageCommand } from "./commands/usage.ts";
import { WEBHOOK_COMMANDS } from "./commands/webhooks.ts";
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE } from "./io.ts";
import { JOURNAL_PRIORITY, writesToJournal } from "../log/journal.ts";
import { openIndex } from "./open-data.ts";

interface Group {
  readonly name: string;
  readonly summary: string;
  readonly commands: readonly Command[];
}

const GROUPS: readonly Group[] = [
  { name: "keys", summary: "create, list, update, revoke and rotate API keys, or move one to another plan", commands: KEY_COMMANDS },
  { name: "plans", summary: "list plans, create or change one", commands: PLAN_COMMANDS },
  { name: "data", summary: "the IP range data set", commands: DATA_COMMANDS },
  { name: "state", summary: "copy keys, plans and usage between SQLite and PostgreSQL", commands: STATE_COMMANDS },
  { name: "admin", summary: "tokens for the admin API and console", commands: ADMIN_COMMANDS },
  { name: "corrections", summary: "local corrections of what the data says about a block", commands: CORRECTION_COMMANDS },
  { name: "webhooks", summary: "webhooks for usage thresholds, key changes and data updates", commands: WEBHOOK_COMMANDS },
  { name: "config", summary: "serve's configuration file", commands: CONFIG_COMMANDS },
];
const COMMANDS: readonly Command[] = [serveCommand, usageCommand, lookupCommand, asnCommand, backupCommand, auditCommand];

function mainHelp(context: CliContext): string {
  const rows = [
    ...COMMANDS.map((command) => [command.name, command.summary]),
    ...GROUPS.flatMap((group) => group.commands.map((command) => [`${group.name} ${command.name}`, command.summary])),
  ];
  const width = Math.max(16, ...rows.map(([name]) => name!.length + 2));
  return `iplookup ${VERSION}: a self-hosted IP lookup API

Usage: iplookup COMMAND [flags]

${rows.map(([name, summary]) => `  ${name!.padEnd(width)}${summary}`).join("\n")}

'${howToRun(context, "COMMAND --help")}' tells more. Each of serve's settings has an environment variable
too (IPLOOKUP_PORT, IPLOOKUP_STATE, ...), read by every command that takes the setting (--state,
--data, ...); other flags (--json, --name, --grace, ...) have none. serve's settings can be in a
TOML file too (--config).`;
}

function groupHelp(group: Group): string {
  const width = Math.max(10, ...group.commands.map((command) => command.name.length + 2));
  return `Usage: iplookup ${group.name} COMMAND\n\n${group.summary}\n\n${group.commands
    .map((command) => `  ${command.name.padEnd(width)}${command.summary}`)
    .join("\n")}`;
}

/** Runs one command line; resolves to the process exit code. Never throws. */
export async function runCli(argv: readonly string[], context: CliContext): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined || first === "--help" || first === "-h" || first === "help") {
    context.io.out(mainHelp(context));
    return first === undefined ? EXIT_USAGE : EXIT_OK;
  }
  if (first === "--version" || first === "-v") {
    context.io.out(versionText(context));
    return EXIT_OK;
  }
  const group = GROUPS.find((candidate) => candidate.name === first);
  let command = COMMANDS.find((candidate) => candidate.name === first);
  let args = rest;
  if (group) {
    const [sub, ...subArgs] = rest;
    if (sub === undefined || sub === "--help" || sub === "-h") {
      context.io.out(groupHelp(group));
      return sub === undefined ? EXIT_USAGE : EXIT_OK;
    }
    command = group.commands.find((candidate) => candidate.name === sub);
    if (!command) {
      const near = nearestName(sub, group.commands.map((candidate) => candidate.name));
      return usageError(`unknown command "${first} ${sub}"${near ? ` (did you mean "${first} ${near}"?)` : ""}; see '${howToRun(context, `${first} --help`)}'`, context);
    }
    args = subArgs;
  }
  if (!command) {
    const near = nearestName(first, [...COMMANDS, ...GROUPS].map((candidate) => candidate.name));
    return usageError(`unknown command "${first}"${near ? ` (did you mean "${near}"?)` : ""}; see '${howToRun(context, "--help")}'`, context);
  }
  const commandName = group ? `${group.name} ${command.name}` : command.name;
  if (args.includes("--help") || args.includes("-h")) {
    context.io.out(command.help);
    return EXIT_OK;
  }
  try {
    return await command.run(args, context);
  } catch (error) {
    // Every message below goes through redactSecrets: one may quote a --state URL or a
    // download's URL, and no password or token in them is ever shown.
    if (error instanceof UnknownFlagError) return usageError(`${error.message}; see '${howToRun(context, `${commandName} --help`)}'`, context);
    if (error instanceof ConfigError) return usageError(error.message, context);
    if (error instanceof CommandFailed) {
      failure(context, `iplookup: ${redactSecrets(error.message)}`);
      return EXIT_FAILED;
    }
    // Before StoreError, which it is: a missing state is not a bad value but a wrong place.
    if (error instanceof StateNotFoundError) {
      failure(
        context,
        `iplookup: ${redactSecrets(error.message)}; check --state or IPLOOKUP_STATE (a new state file is made by '${howToRun(context, "keys create --name NAME")}')`,
      );
      return EXIT_FAILED;
    }
    if (error instanceof StoreError) {
      failure(context, `iplookup: ${redactSecrets(error.message)}`);
      return EXIT_USAGE;
    }
    failure(context, `iplookup: ${redactSecrets((error as Error)?.message ?? String(error))}`);
    return EXIT_FAILED;
  }
}

/**
 * A command's failure on stderr. Under systemd, with stderr the journal's stream, it is
 * filed at error priority (`<3>`, as the server's error lines are: see log/journal.ts),
 * so that `journalctl -p warning` shows why a service failed to start.
 */
function failure(context: CliContext, line: string): void {
  context.io.err(writesToJournal(context.env.JOURNAL_STREAM) ? `${JOURNAL_PRIORITY.error}${line}` : line);
}

function usageError(message: string, context: CliContext): number {
  failure(context, `iplookup: ${redactSecrets(message)}`);
  return EXIT_USAGE;
}

/** `--version`: the build, and the versions of the default data set. */
function versionText(context: CliContext): string {
  const lines = [`iplookup ${VERSION}`, `built: ${BUILD_DATE ?? "from source"}`];
  try {
    const info = openIndex(context.defaultDataPath).info;
    lines.push(`data: ${info.sources.map((source) => `${source.origin} ${source.version}`).join(", ")} (built ${info.builtAt})`);
  } catch (error) {
    lines.push(`data: not available (${(error as Error).message})`);
  }
  return lines.join("\n");
}

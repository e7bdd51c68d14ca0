import { ConfigError } from "../../config/config-error.ts";
import { formatDuration } from "../../config/duration.ts";
import { explainServeConfig, SERVE_SETTING_NAMES, type ExplainedServeConfig, type ServeConfig } from "../../config/serve-config.ts";
import { isEmbedded } from "../../config/paths.ts";
import { givenAs, SETTINGS, type SettingSource } from "../../config/settings.ts";
import { checkUpdatable } from "../../serve/data-updates.ts";
import { loadTlsAtStart } from "../../serve/tls.ts";
import { redactUrl } from "../../store/redact-url.ts";
import { parseCommandArgs } from "../args.ts";
import type { Command } from "../command.ts";
import { EXIT_OK } from "../io.ts";
import { checkDataFile } from "../open-data.ts";

/** Each serve setting's effective value as its flag would take it (secrets masked). */
function shownValues(config: ServeConfig): Record<(typeof SERVE_SETTING_NAMES)[number], string> {
  return {
    host: config.host,
    port: String(config.port),
    state: redactUrl(config.statePath),
    data: isEmbedded(config.dataPath) ? "embedded" : config.dataPath,
    trustProxy: config.trustProxy.map((cidr) => `${cidr.network.text}/${cidr.prefix}`).join(","),
    maxBody: String(config.maxBody),
    logLevel: config.logLevel,
    workers: String(config.workers),
    adminHost: config.adminHost,
    adminPort: config.adminPort === null ? "off" : String(config.adminPort),
    tlsCert: config.tls?.certPath ?? "",
    tlsKey: config.tls?.keyPath ?? "",
    updateEvery: config.updateEvery === null ? "off" : formatDuration(config.updateEvery),
    downloadTimeout: formatDuration(config.downloadTimeout),
    maxExpanded: String(config.maxExpanded),
  };
}

function sourceText(source: SettingSource): string {
  switch (source.kind) {
    case "flag":
      return `flag ${source.name}`;
    case "environment":
      return `environment ${source.name}`;
    case "file":
      return `file ${source.path}:${source.line}`;
    case "default":
      return "default";
  }
}

/**
 * What serve refuses at start before it listens, checked with serve's own functions and
 * in its order, so that the unit's check before the start fails where serve would: an
 * --update-every on data that cannot be updated, a data file that is not there, a TLS
 * pair that cannot be read or used. The data file is looked for, not loaded (a large
 * one takes serve seconds and a gigabyte). serve's message is kept, followed by the
 * file lines of the settings it is about.
 */
function checkAsServeWould({ config, sources }: ExplainedServeConfig, flags: Readonly<Record<string, unknown>>, env: Readonly<Record<string, string | undefined>>): void {
  const about = (names: readonly (typeof SERVE_SETTING_NAMES)[number][], check: () => void) => {
    try {
      check();
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      const lines = names.flatMap((name) => {
        const source = sources[name];
        return source.kind === "file" ? [`${SETTINGS[name].flag} at ${source.path}:${source.line}`] : [];
      });
      throw lines.length === 0 ? error : new ConfigError(`${error.message} (${lines.join(", ")})`);
    }
  };
  if (config.updateEvery !== null) about(["updateEvery", "data"], () => checkUpdatable(config.dataPath, givenAs("updateEvery", flags, env)));
  about(["data"], () => checkDataFile(config.dataPath, givenAs("data", flags, env)));
  const tls = config.tls;
  if (tls) about(["tlsCert", "tlsKey"], () => loadTlsAtStart(tls));
}

const checkCommand: Command = {
  name: "check",
  summary: "check serve's configuration file and show the settings in effect, and where each comes from",
  help: `Usage: iplookup config check [--config PATH] [--json] [any serve flag]

Reads serve's settings as 'serve' would (flag, then environment variable, then the
configuration file, then the default), and prints each effective value and where it
came from; a password in a postgres:// URL is shown as ***. A configuration file that is
not TOML, or holds an unknown setting or a bad value, is named with its line, and the
command exits 2. So does what 'serve' would refuse at start with exit 2: a --data file
that is not there, --update-every on data that cannot be updated (the data embedded in
the binary, a file that records no sources), a --tls-cert/--tls-key pair that cannot be
read or used; the message is serve's, with the file's lines of the settings at fault.
The data is not loaded: a damaged data file is refused by 'serve' alone. The systemd
unit runs this check before 'serve' starts.

  --config PATH   the TOML file (env IPLOOKUP_CONFIG); one top-level key a setting,
                  named as its flag: port = 8080, trust-proxy = ["10.0.0.5"]
  --json          {"file": PATH|null, "settings": {NAME: {"value", "source"}}}: NAME is
                  the flag's name in snake_case (max_body, tls_cert); value is the
                  text the flag would take, or null when not set; data also has
                  "embedded": true when it is the data embedded in the binary
                  (its value null)`,
  async run(argv, context) {
    const { flags } = parseCommandArgs(argv, { settings: SERVE_SETTING_NAMES, strings: ["config"], booleans: ["json"] });
    const explained = explainServeConfig(flags, context.env, { dataPath: context.defaultDataPath });
    checkAsServeWould(explained, flags, context.env);
    const { config, file, sources } = explained;
    const values = shownValues(config);
    const rows = SERVE_SETTING_NAMES.map((name) => ({ name: SETTINGS[name].flag, value: values[name], source: sourceText(sources[name]) }));
    if (flags.json) {
      // snake_case keys, as every --json output has; a setting that is not set (no TLS
      // file, no trusted proxy) is null, not "". The data embedded in the binary has no
      // path a flag could take (--data embedded names a file called embedded): its value
      // is null too, and data's embedded says that data is the one used.
      const embedded = isEmbedded(config.dataPath);
      const settings = Object.fromEntries(
        rows.map((row) => {
          const value = row.value === "" || (row.name === "data" && embedded) ? null : row.value;
          return [row.name.replaceAll("-", "_"), row.name === "data" ? { value, source: row.source, embedded } : { value, source: row.source }];
        }),
      );
      context.io.out(JSON.stringify({ file: file?.path ?? null, settings }));
      return EXIT_OK;
    }
    const width = Math.max(...rows.map((row) => row.name.length)) + 2;
    const valueWidth = Math.min(46, Math.max(...rows.map((row) => row.value.length)));
    context.io.out(`configuration file: ${file ? `${file.path} (valid)` : "none (--config or IPLOOKUP_CONFIG names one)"}`);
    for (const row of rows) context.io.out(`${row.name.padEnd(width)}${(row.value === "" ? "-" : row.value).padEnd(valueWidth)}  ${row.source}`);
    return EXIT_OK;
  },
};

export const CONFIG_COMMANDS: readonly Command[] = [checkCommand];

import { formatDuration } from "../../config/duration.ts";
import { explainServeConfig, SERVE_SETTING_NAMES, type ServeConfig } from "../../config/serve-config.ts";
import { isEmbedded } from "../../config/paths.ts";
import { SETTINGS, type SettingSource } from "../../config/settings.ts";
import { redactUrl } from "../../store/redact-url.ts";
import { parseCommandArgs } from "../args.ts";
import type { Command } from "../command.ts";
import { EXIT_OK } from "../io.ts";

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

const checkCommand: Command = {
  name: "check",
  summary: "check serve's configuration file and show the settings in effect, and where each comes from",
  help: `Usage: iplookup config check [--config PATH] [--json] [any serve flag]

Reads serve's settings as 'serve' would (flag, then environment variable, then the
configuration file, then the default), and prints each effective value and where it
came from; a password in a postgres:// URL is shown as ***. A configuration file that is
not TOML, or holds an unknown setting or a bad value, is named with its line, and the
command exits 2. The systemd unit runs it before 'serve' starts.

  --config PATH   the TOML file (env IPLOOKUP_CONFIG); one top-level key a setting,
                  named as its flag: port = 8080, trust-proxy = ["10.0.0.5"]
  --json          {"file": PATH|null, "settings": {NAME: {"value", "source"}}}`,
  async run(argv, context) {
    const { flags } = parseCommandArgs(argv, { settings: SERVE_SETTING_NAMES, strings: ["config"], booleans: ["json"] });
    const { config, file, sources } = explainServeConfig(flags, context.env, { dataPath: context.defaultDataPath });
    const values = shownValues(config);
    const rows = SERVE_SETTING_NAMES.map((name) => ({ name: SETTINGS[name].flag, value: values[name], source: sourceText(sources[name]) }));
    if (flags.json) {
      const settings = Object.fromEntries(rows.map((row) => [row.name, { value: row.value, source: row.source }]));
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

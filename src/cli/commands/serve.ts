import { BUILD_DATE, VERSION } from "../../build-info.ts";
import { formatDuration } from "../../config/duration.ts";
import { readServeConfig, SERVE_SETTING_NAMES, type ServeConfig } from "../../config/serve-config.ts";
import { dataSourceName } from "../../config/paths.ts";
import { givenAs } from "../../config/settings.ts";
import { checkUpdatable, startDataUpdates } from "../../serve/data-updates.ts";
import type { RunningServer } from "../../serve/server.ts";
import { redactUrl } from "../../store/redact-url.ts";
import { openLiveIndex } from "../open-data.ts";
import { parseCommandArgs } from "../args.ts";
import { howToRun, shellWord } from "../command-name.ts";
import { takeStartupSignals } from "../startup-signals.ts";
import { serviceNotifier } from "../service-notify.ts";
import type { CliContext, Command } from "../command.ts";
import { EXIT_FAILED, EXIT_OK } from "../io.ts";
import { writesToJournal } from "../../log/journal.ts";

export type { RunningServer } from "../../serve/server.ts";

/**
 * Starts the service from its configuration, writing its logs to the command's stderr.
 * The server (the HTTP framework among it) is loaded here, not with the command line:
 * loading it took about 0.1 s of every other command's 0.16 s start.
 */
export async function startServerFor(config: ServeConfig, context: CliContext, dataGivenAs = "--data"): Promise<RunningServer> {
  const { startServer } = await import("../../serve/server.ts");
  return startServer(config, {
    writeLog: (text, written) => {
      if (context.io.errWhenTaken) return context.io.errWhenTaken(text, written);
      context.io.err(text);
      written();
    },
    now: context.now,
    version: VERSION,
    journal: writesToJournal(context.env.JOURNAL_STREAM),
    openIndex: (onReload, loader) => openLiveIndex(config.dataPath, onReload, loader, dataGivenAs),
    workerEntry: context.workerEntry,
  });
}

function announce(config: ServeConfig, server: RunningServer, context: CliContext): void {
  const { logger } = server;
  if (server.keyCount === 0) {
    logger.log("warn", `there are no API keys yet, so every /v1 request will get 401. Create one with: ${howToRun(context, `keys create --name NAME --state ${shellWord(redactUrl(config.statePath))}`)}`);
  }
  const info = server.index.current().info;
  logger.announce("iplookup serving", {
    listen: server.url,
    admin: server.adminUrl,
    tls: config.tls ? { cert: config.tls.certPath, key: config.tls.keyPath } : null,
    workers: config.workers,
    version: VERSION,
    build_date: BUILD_DATE,
    pid: process.pid,
    state: redactUrl(config.statePath),
    data: dataSourceName(config.dataPath, info.version),
    data_version: info.dataVersion,
    data_built_at: info.builtAt,
    trust_proxy: config.trustProxy.map((cidr) => `${cidr.network.text}/${cidr.prefix}`),
    max_body: config.maxBody,
    log_level: config.logLevel,
    active_keys: server.keyCount,
    update_every: config.updateEvery === null ? null : formatDuration(config.updateEvery),
  });
}

export const serveCommand: Command = {
  name: "serve",
  summary: "run the HTTP API",
  help: `Usage: iplookup serve [--host ::] [--port 8080] [--state PATH|URL] [--data PATH]
                      [--trust-proxy CIDR,...] [--max-body SIZE] [--log-level info] [--workers N]
                      [--admin-host 127.0.0.1] [--admin-port 8081|off]
                      [--tls-cert PATH --tls-key PATH] [--update-every DURATION]
                      [--download-timeout DURATION] [--max-expanded SIZE]
                      [--config PATH]

Serves the lookup API. Every flag can also be set by its environment variable, and in
a TOML configuration file (--config): a flag wins over its variable, which wins over
the file, which wins over the default.

  --config PATH        TOML file of these settings, each named as its flag
                       (env IPLOOKUP_CONFIG; 'iplookup config check' validates it)
  --host ADDR          address to listen on (env IPLOOKUP_HOST; default :: , every IPv6
                       and IPv4 address; 0.0.0.0 for IPv4 only)
  --port N             TCP port (env IPLOOKUP_PORT; default 8080; 0 picks a free one)
  --state PATH|URL     keys, plans and usage: a SQLite file, or a postgres:// URL (env
                       IPLOOKUP_STATE; default $XDG_STATE_HOME/iplookup/state.db or
                       ~/.local/state/iplookup/state.db)
  --data PATH          IP range data file (env IPLOOKUP_DATA; default: the shipped data set)
  --trust-proxy LIST   proxies whose X-Forwarded-For /v1/me believes (env IPLOOKUP_TRUST_PROXY)
  --max-body SIZE      largest request body (env IPLOOKUP_MAX_BODY; default 2MiB)
  --log-level LEVEL    debug, info (access log), warn, error or silent (env IPLOOKUP_LOG_LEVEL)
  --workers N          threads serving the port, as one server: one copy of the data,
                       shared rate limits and metrics (env IPLOOKUP_WORKERS; default: the
                       number of cores)
  --admin-host ADDR    address of the admin API and console (env IPLOOKUP_ADMIN_HOST;
                       default 127.0.0.1: this machine only; reach it with an SSH tunnel
                       or a TLS proxy, never expose it bare)
  --admin-port N|off   port of the admin API and console (env IPLOOKUP_ADMIN_PORT;
                       default 8081; 0 picks a free one; off: no admin listener)

  --tls-cert PATH      HTTPS on both listeners with this PEM certificate (chain) and
  --tls-key PATH       its key (env IPLOOKUP_TLS_CERT, IPLOOKUP_TLS_KEY); SIGHUP reads
                       them again (a renewed certificate needs no restart)
  --update-every D     run 'data update' on the --data file this often, in the
                       background (24h, 6h, 30m; at least 1s; env IPLOOKUP_UPDATE_EVERY;
                       default off): a file made by 'data import', not the embedded data
  --download-timeout D the longest one download of those updates may take (env
                       IPLOOKUP_DOWNLOAD_TIMEOUT; default 30m)
  --max-expanded SIZE  the most an update unpacks from compressed sources (env
                       IPLOOKUP_MAX_EXPANDED; default 2GiB)

SIGHUP, or replacing the data file (by rename), reloads the data without a restart.
SIGTERM or SIGINT stops accepting, finishes the requests in flight and exits 0.`,
  async run(argv, context) {
    const { flags } = parseCommandArgs(argv, { settings: SERVE_SETTING_NAMES, strings: ["config"] });
    const config = readServeConfig(flags, context.env, { dataPath: context.defaultDataPath });
    if (config.updateEvery !== null) checkUpdatable(config.dataPath, givenAs("updateEvery", flags, context.env));
    // Listen for the signals before anything else: a stop sent while the server starts
    // ends it with 0 as soon as it can; a SIGHUP before there is data to reload is ignored.
    // A terminal's Ctrl-C may arrive twice: the second must not cut the graceful stop short.
    let server: RunningServer | undefined;
    let stopping = false;
    const onHangup = () => {
      if (!stopping) server?.reload();
    };
    let requestStop = () => {};
    const stopRequested = new Promise<"stop">((resolve) => (requestStop = () => resolve("stop")));
    const onStop = () => {
      stopping = true;
      requestStop();
    };
    process.on("SIGHUP", onHangup);
    process.on("SIGTERM", onStop);
    process.on("SIGINT", onStop);
    // A stop that came while the program loaded counts; a SIGHUP then had nothing to reload.
    if (takeStartupSignals().some((signal) => signal !== "SIGHUP")) return EXIT_OK;
    try {
      server = await startServerFor(config, context, givenAs("data", flags, context.env));
    } catch (error) {
      // Stopped while it started (CONTRACT §12: exit 0): a start that then fails, such as
      // a state database gone silent that the connection gave up on, was not wanted.
      if (stopping) return EXIT_OK;
      throw error;
    }
    const running = server;
    const serviceManager = serviceNotifier(context.env, (error) => running.logger.log("warn", error));
    if (!stopping) {
      announce(config, server, context);
      serviceManager.ready();
    }
    const updates =
      config.updateEvery !== null && !stopping
        ? startDataUpdates({
            every: config.updateEvery,
            downloadTimeout: config.downloadTimeout,
            maxExpanded: config.maxExpanded,
            dataPath: config.dataPath,
            command: context.selfCommand,
            env: context.env,
            logger: server.logger,
            metrics: server.metrics,
            dataBuiltAt: server.index.current().info.builtAt,
            statePath: config.statePath,
          })
        : null;
    const reason = await Promise.race([stopRequested, server.failed]);
    stopping = true;
    serviceManager.stopping();
    if (reason !== "stop") server.logger.log("error", `${reason}; stopping`);
    await updates?.stop();
    await server.stop();
    // The handlers stay until the process has exited: a late copy of the stop signal
    // must not kill a process that is only writing its last log lines.
    return reason === "stop" ? EXIT_OK : EXIT_FAILED;
  },
};

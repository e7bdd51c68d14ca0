import { KeyCache } from "../../access/key-cache.ts";
import { BUILD_DATE, VERSION } from "../../build-info.ts";
import { readServeConfig, type ServeConfig } from "../../config/serve-config.ts";
import { createApp } from "../../http/app.ts";
import { listen } from "../../http/server.ts";
import type { LiveIndex } from "../../index/live-index.ts";
import { openLiveIndex } from "../open-data.ts";
import { lineBuffer } from "../../log/line-buffer.ts";
import { createLogger, type Logger } from "../../log/logger.ts";
import { Metrics } from "../../metrics/metrics.ts";
import { SqliteStore } from "../../store/sqlite-store.ts";
import { parseCommandArgs } from "../args.ts";
import type { CliContext, Command } from "../command.ts";
import { runWorkers } from "./serve-workers.ts";

/** How often a server looks for key and plan changes made by other processes. */
const KEY_POLL_MS = 250;
/** How often it looks for a replaced data file. */
const DATA_POLL_MS = 1000;
/** How long a stop waits for requests in flight before closing their connections. */
const STOP_GRACE_MS = 10_000;

/** A started server; `stop` finishes the requests in flight and commits their units. */
export interface RunningServer {
  readonly url: string;
  readonly port: number;
  /** Loads the data file again (what SIGHUP does). */
  reload(): boolean;
  stop(): Promise<void>;
}

/** Starts the service from its configuration: the composition root of iplookup. */
export async function startServer(config: ServeConfig, context: CliContext, options: { reusePort?: boolean } = {}): Promise<RunningServer> {
  const logLines = lineBuffer(context.io.err);
  const logger = createLogger(config.logLevel, logLines.write, context.now);
  const index = openLiveIndex(config.dataPath, (outcome) => {
    if (outcome.ok) logger.log("info", "data reloaded", { data: config.dataPath, data_version: outcome.index.info.dataVersion, data_built_at: outcome.index.info.builtAt });
    else logger.log("error", "data reload failed; still serving the data loaded before", { data: config.dataPath, error: String((outcome.error as Error)?.message ?? outcome.error) });
  });
  const store = SqliteStore.open(config.statePath);
  const keys = await KeyCache.load(store);
  keys.watch(KEY_POLL_MS, (error) => logger.log("error", "reloading keys failed", { error: String(error) }));
  index.watch(DATA_POLL_MS);
  // Loading read the data file whole and built the index from it: give that memory back
  // before serving rather than carry it as resident size.
  Bun.gc(true);
  const metrics = new Metrics();
  const app = createApp({
    store,
    keys,
    index: () => index.current(),
    clock: { now: context.now },
    trustProxy: config.trustProxy,
    maxBody: config.maxBody,
    metrics,
    version: VERSION,
    logger,
  });
  const server = listen(app, { host: config.host, port: config.port, reusePort: options.reusePort, metrics, logger });
  announce(config, server.url.href, index, keys.size, logger);
  return {
    url: server.url.href,
    port: server.port!,
    reload: () => index.reload(),
    async stop() {
      keys.stop();
      index.stop();
      const forced = setTimeout(() => server.stop(true), STOP_GRACE_MS);
      await server.stop();
      clearTimeout(forced);
      await store.close();
      logger.log("info", "stopped");
      logLines.flush();
    },
  };
}

function announce(config: ServeConfig, url: string, index: LiveIndex, keyCount: number, logger: Logger): void {
  if (keyCount === 0) {
    logger.log("warn", `there are no API keys yet, so every /v1 request will get 401. Create one with: iplookup keys create --name NAME --state ${config.statePath}`);
  }
  const info = index.current().info;
  logger.announce("iplookup serving", {
    listen: url,
    version: VERSION,
    build_date: BUILD_DATE,
    pid: process.pid,
    state: config.statePath,
    data: config.dataPath,
    data_version: info.dataVersion,
    data_built_at: info.builtAt,
    trust_proxy: config.trustProxy.map((cidr) => `${cidr.network.text}/${cidr.prefix}`),
    max_body: config.maxBody,
    log_level: config.logLevel,
    active_keys: keyCount,
  });
}

const SERVE_SETTINGS = ["host", "port", "state", "data", "trustProxy", "maxBody", "logLevel", "workers"] as const;

export const serveCommand: Command = {
  name: "serve",
  summary: "run the HTTP API",
  help: `Usage: iplookup serve [--host 0.0.0.0] [--port 8080] [--state PATH] [--data PATH]
                      [--trust-proxy CIDR,...] [--max-body SIZE] [--log-level info] [--workers N]

Serves the lookup API. Every flag can also be set by its environment variable.

  --host ADDR          address to listen on (env IPLOOKUP_HOST; default 0.0.0.0)
  --port N             TCP port (env IPLOOKUP_PORT; default 8080; 0 picks a free one)
  --state PATH         keys, plans and usage (env IPLOOKUP_STATE;
                       default $XDG_STATE_HOME/iplookup/state.db or ~/.local/state/iplookup/state.db)
  --data PATH          IP range data file (env IPLOOKUP_DATA; default: the shipped data set)
  --trust-proxy LIST   proxies whose X-Forwarded-For /v1/me believes (env IPLOOKUP_TRUST_PROXY)
  --max-body SIZE      largest request body (env IPLOOKUP_MAX_BODY; default 2MiB)
  --log-level LEVEL    debug, info (access log), warn, error or silent (env IPLOOKUP_LOG_LEVEL)
  --workers N          processes sharing the port and the state file
                       (env IPLOOKUP_WORKERS; default: the number of cores)

SIGHUP, or replacing the data file (by rename), reloads the data without a restart.
SIGTERM or SIGINT stops accepting, finishes the requests in flight and exits 0.`,
  async run(argv, context) {
    const { flags } = parseCommandArgs(argv, { settings: SERVE_SETTINGS });
    const config = readServeConfig(flags, context.env, { dataPath: context.defaultDataPath });
    if (config.workers > 1) return runWorkers(config, argv, context);
    const reusePort = context.env.IPLOOKUP_WORKER_OF !== undefined;
    // Listen for the signals before the server announces itself, so a stop sent as soon
    // as it is up is never lost. A terminal's Ctrl-C reaches the workers of `--workers`
    // both directly and through the supervisor: the second signal must not cut the
    // graceful stop short.
    let server: RunningServer | undefined;
    let stopping = false;
    const onHangup = () => {
      if (!stopping) server?.reload();
    };
    let requestStop = () => {};
    const stopRequested = new Promise<void>((resolve) => (requestStop = resolve));
    const onStop = () => requestStop();
    process.on("SIGHUP", onHangup);
    process.on("SIGTERM", onStop);
    process.on("SIGINT", onStop);
    server = await startServer(config, context, { reusePort });
    await stopRequested;
    stopping = true;
    await server.stop();
    // The handlers stay until the process has exited: a late copy of the stop signal
    // must not kill a process that is only writing its last log lines.
    return 0;
  },
};

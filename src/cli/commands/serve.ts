import { KeyCache } from "../../access/key-cache.ts";
import { readServeConfig, type ServeConfig } from "../../config/serve-config.ts";
import { createApp } from "../../http/app.ts";
import { RangeIndex } from "../../index/range-index.ts";
import { SqliteStore } from "../../store/sqlite-store.ts";
import { parseCommandArgs } from "../args.ts";
import type { CliContext, Command } from "../command.ts";
import type { Io } from "../io.ts";

/** How often a server looks for key and plan changes made by other processes. */
const KEY_POLL_MS = 250;

/** A started server; `stop` finishes the requests in flight and commits their units. */
export interface RunningServer {
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
}

/** Starts the service from its configuration: the composition root of iplookup. */
export async function startServer(config: ServeConfig, context: CliContext): Promise<RunningServer> {
  const index = RangeIndex.open(config.dataPath);
  const store = SqliteStore.open(config.statePath);
  const keys = await KeyCache.load(store);
  keys.watch(KEY_POLL_MS, (error) => context.io.err(`iplookup: reloading keys failed: ${String(error)}`));
  const app = createApp({
    store,
    keys,
    index: () => index,
    clock: { now: context.now },
    trustProxy: config.trustProxy,
    maxBody: config.maxBody,
  });
  // Bodies past --max-body are refused by the app with a contract error; Bun's own limit
  // only has to stay out of the way (the app never buffers more than --max-body).
  app.listen({ hostname: config.host, port: config.port, maxRequestBodySize: Number.MAX_SAFE_INTEGER });
  const server = app.server!;
  announce(config, server.url.href, index, keys.size, context.io);
  return {
    url: server.url.href,
    port: server.port!,
    async stop() {
      keys.stop();
      await server.stop();
      await store.close();
    },
  };
}

function announce(config: ServeConfig, url: string, index: RangeIndex, keyCount: number, io: Io): void {
  if (keyCount === 0) {
    io.err(
      `iplookup: there are no API keys yet, so every /v1 request will get 401. Create one with:\n` +
        `  iplookup keys create --name NAME --state ${config.statePath}`,
    );
  }
  const info = index.info;
  io.err(
    JSON.stringify({
      level: "info",
      msg: "iplookup serving",
      listen: url,
      state: config.statePath,
      data: config.dataPath,
      data_version: info.version,
      data_built_at: info.builtAt,
      trust_proxy: config.trustProxy.map((cidr) => `${cidr.network.text}/${cidr.prefix}`),
      max_body: config.maxBody,
      active_keys: keyCount,
    }),
  );
}

export const serveCommand: Command = {
  name: "serve",
  summary: "run the HTTP API",
  help: `Usage: iplookup serve [--host 0.0.0.0] [--port 8080] [--state PATH] [--data PATH]
                      [--trust-proxy CIDR,...] [--max-body SIZE]

Serves the lookup API. Every flag can also be set by its environment variable.

  --host ADDR          address to listen on (env IPLOOKUP_HOST; default 0.0.0.0)
  --port N             TCP port (env IPLOOKUP_PORT; default 8080; 0 picks a free one)
  --state PATH         keys, plans and usage (env IPLOOKUP_STATE;
                       default $XDG_STATE_HOME/iplookup/state.db or ~/.local/state/iplookup/state.db)
  --data PATH          IP range data file (env IPLOOKUP_DATA; default: the shipped data set)
  --trust-proxy LIST   proxies whose X-Forwarded-For /v1/me believes (env IPLOOKUP_TRUST_PROXY)
  --max-body SIZE      largest request body (env IPLOOKUP_MAX_BODY; default 2MiB)

Stops on SIGTERM or SIGINT after finishing the requests in flight.`,
  async run(argv, context) {
    const { flags } = parseCommandArgs(argv, { settings: ["host", "port", "state", "data", "trustProxy", "maxBody"] });
    const config = readServeConfig(flags, context.env);
    // Listen for the signals before the server announces itself, so a stop sent as soon
    // as it is up is never lost.
    const stopRequested = new Promise<void>((resolve) => {
      const onSignal = () => {
        process.off("SIGTERM", onSignal);
        process.off("SIGINT", onSignal);
        resolve();
      };
      process.on("SIGTERM", onSignal);
      process.on("SIGINT", onSignal);
    });
    const server = await startServer(config, context);
    await stopRequested;
    await server.stop();
    return 0;
  },
};

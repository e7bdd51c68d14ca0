import { KeyCache } from "../access/key-cache.ts";
import { RateLimiter } from "../access/rate-limiter.ts";
import { createApp } from "../http/app.ts";
import { listen } from "../http/server.ts";
import type { RangeIndex } from "../index/range-index.ts";
import type { Logger } from "../log/logger.ts";
import { Metrics } from "../metrics/metrics.ts";
import { openStore } from "../store/open-store.ts";
import type { Store } from "../store/store.ts";
import type { ThreadSetup } from "./messages.ts";

/** How often a thread looks for key and plan changes made by other processes. */
const KEY_POLL_MS = 250;
/**
 * How long a charge may wait for a state file locked by another process (a backup, the
 * CLI, a sqlite3 shell) before it answers 503 store_unavailable; the thread never
 * blocks meanwhile.
 */
const LOCK_WAIT_MS = 2000;
/** How long a stop waits for requests in flight before closing their connections. */
const STOP_GRACE_MS = 10_000;

/** One thread's share of a server: its listener on the port, its app, its store connection. */
export interface ServingThread {
  readonly keys: KeyCache;
  readonly url: URL;
  /** Finishes the requests in flight (at most STOP_GRACE_MS), commits their units, closes the store. */
  stop(): Promise<void>;
}

/**
 * Starts serving on one thread: the main thread and every worker thread run this, each
 * with its own app and store connection (SQLite connections belong to one thread), over
 * the index, rate-limit buckets and metrics that all threads share.
 */
export async function startServingThread(setup: ThreadSetup, index: () => RangeIndex, logger: Logger, now: () => Date): Promise<ServingThread> {
  const { config } = setup;
  const store: Store = await openStore(config.statePath, { lockWaitMs: LOCK_WAIT_MS });
  const keys = await KeyCache.load(store);
  keys.watch(KEY_POLL_MS, (error) => logger.log("error", "reloading keys failed", { error: String(error) }));
  const metrics = new Metrics(setup.metrics, setup.thread);
  const app = createApp({
    store,
    keys,
    index,
    clock: { now },
    trustProxy: config.trustProxy,
    maxBody: config.maxBody,
    metrics,
    rateLimits: { keys: new RateLimiter(undefined, setup.rateTables.keys), failedKeys: new RateLimiter(undefined, setup.rateTables.failedKeys) },
    version: setup.version,
    logger,
  });
  let server: ReturnType<typeof listen>;
  try {
    server = listen(app, { host: config.host, port: setup.port, reusePort: setup.reusePort, metrics, logger });
  } catch (error) {
    keys.stop();
    await store.close();
    throw error;
  }
  return {
    keys,
    url: server.url,
    async stop() {
      keys.stop();
      const forced = setTimeout(() => server.stop(true), STOP_GRACE_MS);
      await server.stop();
      clearTimeout(forced);
      await store.close();
    },
  };
}

/** The tables the threads of one server share, made once by the main thread. */
export function sharedRateTables(): ThreadSetup["rateTables"] {
  return { keys: new RateLimiter().table, failedKeys: new RateLimiter().table };
}

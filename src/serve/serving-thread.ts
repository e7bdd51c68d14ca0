import { KeyCache } from "../access/key-cache.ts";
import { CorrectionCache } from "../corrections/correction-cache.ts";
import type { CorrectionTable } from "../corrections/correction-table.ts";
import { LEASE_WAIT_MS, LeaseLimiter } from "../access/lease-limiter.ts";
import { RateLimiter } from "../access/rate-limiter.ts";
import { StoreHealth } from "../access/store-health.ts";
import { createApp } from "../http/app.ts";
import { listen } from "../http/server.ts";
import type { RangeIndex } from "../index/range-index.ts";
import type { Logger } from "../log/logger.ts";
import { Metrics } from "../metrics/metrics.ts";
import { isDamagedFile } from "../errors/sqlite-codes.ts";
import { openStore, redactUrl } from "../store/open-store.ts";
import { StoreRefusedError, StoreUnavailableError, type Store } from "../store/store.ts";
import { StateFileChangedError } from "../store/state-file-identity.ts";
import type { ThreadSetup } from "./messages.ts";
import { bindError } from "./port.ts";
import { FailureReports } from "./failure-reports.ts";
import { RetiringListeners } from "./retiring-listeners.ts";
import { followStoreChanges } from "./store-changes.ts";
import type { TlsPair } from "./tls.ts";

/** How often a thread looks for changes to keys, plans and corrections made by other processes. */
const STORE_POLL_MS = 250;
/**
 * How long a charge may wait for a state file locked by another process (a backup, the
 * CLI, a sqlite3 shell) before it answers 503 store_unavailable; the thread never
 * blocks meanwhile.
 */
const LOCK_WAIT_MS = 2000;
/** What a server says once its SQLite state file was removed or replaced under it: it is never used again. */
const STATE_FILE_CHANGED =
  "the state file was removed or replaced while the server runs; charges and admin changes answer 503 store_unavailable and /readyz 503 from now on. Restart the servers on the file as it is now; to restore a state, use `iplookup state copy --replace`, or stop the servers first (docs/backups.md)";
/** How long a listener replaced by a new certificate's keeps serving its connections, each told to close. */
const RETIRE_MS = 1000;
/** How long a stop waits for requests in flight before closing their connections. */
const STOP_GRACE_MS = 10_000;

/** One thread's share of a server: its listener on the port, its app, its store connection. */
export interface ServingThread {
  readonly keys: KeyCache;
  /** The local corrections this thread's lookups answer with now (null: none). */
  corrections(): CorrectionTable | null;
  readonly url: URL;
  /**
   * Listens with a new certificate: a new listener joins the port, then the old one stops
   * accepting and finishes the requests on its connections, so none is dropped.
   */
  relisten(tls: TlsPair): void;
  /** Finishes the requests in flight (at most STOP_GRACE_MS), commits their units, closes the store. */
  stop(): Promise<void>;
}

/**
 * Starts serving on one thread: the main thread and every worker thread run this, each
 * with its own app and store connection (SQLite connections belong to one thread), over
 * the index, rate-limit buckets and metrics that all threads share.
 */
export async function startServingThread(
  setup: ThreadSetup,
  index: () => RangeIndex,
  logger: Logger,
  now: () => Date,
  /** The main thread's: claims the port (claimPort) just before the first listen, and gives the port to listen on. */
  claimPort?: () => number,
): Promise<ServingThread> {
  const { config } = setup;
  // The server's checkpoint thread checkpoints the state file (see wal-checkpoints.ts), never a charge here.
  // requireWritable: a state file this process may read but not write is refused at
  // start (StateFileError), not found out by every charge.
  const store: Store = await openStore(config.statePath, {
    lockWaitMs: LOCK_WAIT_MS,
    // PostgreSQL: a lease of rate-limit tokens waits no longer than its requests do for a
    // bucket another session has locked (a charge's transaction waits its own time).
    lockTimeoutMs: LEASE_WAIT_MS,
    walAutoCheckpoint: false,
    requireWritable: true,
    onWriteFault: (fault) => {
      if (fault.writable) logger.log("warn", "the state file can be written again", { thread: setup.thread, state: config.statePath, refused: fault.refused });
      else if (isDamagedFile(fault.error.cause)) logger.log("error", "the state file is damaged; charged requests answer 503 store_unavailable until it is restored", { thread: setup.thread, state: config.statePath, error: fault.error.message, refused: fault.refused });
      else logger.log("error", "the state file cannot be written; charged requests answer 503 store_unavailable until it can", { thread: setup.thread, state: config.statePath, error: fault.error.message, refused: fault.refused });
    },
  });
  // One line when the store goes away and one when it is back, not one every poll.
  const health = new StoreHealth(
    (reachable, error) => {
      if (reachable) logger.log("warn", "the state store can be reached again", { thread: setup.thread });
      // Every thread finds it within a poll; the first thread says it for the server.
      else if (error instanceof StateFileChangedError) {
        if (setup.thread === 0) logger.log("error", STATE_FILE_CHANGED, { state: config.statePath, error: error.message });
      } else logger.log("error", "the state store cannot be reached; /v1 answers 503 store_unavailable until it can", { thread: setup.thread, error: redactUrl(String(error)) });
    },
    setup.storeMarks,
    setup.thread,
  );
  const keys = await KeyCache.load(store);
  // Local corrections follow the same change counter as the keys, read once a poll for both.
  const corrections = await CorrectionCache.load(store);
  // A poll's other failures: one line when one starts (again at most once a minute while its message stays), one when it works again.
  const pollFailures = new FailureReports((step, error) => {
    if (error !== null) logger.log("error", `${step} failed`, { thread: setup.thread, error });
    else logger.log("warn", `${step} works again`, { thread: setup.thread });
  });
  // A poll that reads while this thread's mark is set probes with a write (one at a
  // time): only a write clears the mark (see StoreHealth). A store without the probe
  // (SQLite) is back once it reads.
  let probing = false;
  const probe = () => {
    if (!health.markedHere || probing) return;
    if (!store.probeWrite) return health.markReachable();
    probing = true;
    const startedAt = performance.now();
    store.probeWrite().then(
      () => health.wrote(startedAt),
      (error: unknown) => health.writeFailed(error),
    ).finally(() => (probing = false));
  };
  const changes = followStoreChanges(store, { keys, corrections }, STORE_POLL_MS, {
    reached: () => {
      probe();
      pollFailures.passed();
    },
    failed(error, follower) {
      // A read the database refuses while it serves (a privilege revoked on the keys) is
      // a poll failure like any other: the server stays ready, on the keys it holds.
      if (error instanceof StoreUnavailableError && !(error instanceof StoreRefusedError)) health.markUnreachable(error);
      else pollFailures.failed(follower === undefined ? "reading the store's change counter" : `reloading ${follower}`, redactUrl(String(error)));
    },
  });
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
    // A store that several servers share (PostgreSQL) holds each key's rate for all of
    // them; the shared buckets above hold it for this server's threads.
    leases: store.leaseTokens ? new LeaseLimiter(store.leaseTokens.bind(store), health) : undefined,
    storeHealth: health,
    corrections: () => corrections.current(),
  });
  let port = setup.port;
  const open = (tls: TlsPair | null): Listener => {
    const listener = { retiring: false } as Listener;
    listener.server = listen(app, { host: config.host, port, reusePort: true, tls: tls ?? undefined, closeConnections: () => listener.retiring, metrics, logger, trustProxy: config.trustProxy });
    return listener;
  };
  let current: Listener;
  try {
    // Claimed and listened on in one turn: nothing between the two lets another claim it.
    if (claimPort) port = claimPort();
    current = open(setup.tls);
  } catch (error) {
    changes.stop();
    await store.close();
    // Only the bind's failures are told as the port's (EACCES there: a port below 1024); a claim's are already.
    throw bindError(error, config.host, port);
  }
  /** Listeners replaced by a new certificate, finishing their connections. */
  const draining = new Set<Promise<void>>();
  const finish = (listener: Listener["server"]) => {
    const forced = setTimeout(() => listener.stop(true), STOP_GRACE_MS);
    const done = listener.stop().finally(() => clearTimeout(forced));
    draining.add(done);
    void done.finally(() => draining.delete(done));
    return done;
  };
  /** Listeners replaced by a new certificate, answering with `Connection: close` until RETIRE_MS has passed. */
  const retiring = new RetiringListeners<Listener>(RETIRE_MS, (listener) => void finish(listener.server));
  return {
    keys,
    corrections: () => corrections.current(),
    url: current.server.url,
    relisten(tls) {
      const previous = current;
      current = open(tls);
      // The old listener tells its clients to reconnect, then stops: closing its idle
      // keep-alive connections at once would fail a request a client sends on one just then.
      previous.retiring = true;
      retiring.retire(previous);
    },
    async stop() {
      changes.stop();
      // Told to stop, a retiring listener stops at once like the current one: its clients
      // would be told to reconnect to a server that is going away.
      retiring.stopAll();
      await Promise.all([finish(current.server), ...draining]);
      await store.close();
    },
  };
}

/** A listener on the port; `retiring` once a new certificate's listener replaced it. */
interface Listener {
  server: ReturnType<typeof listen>;
  retiring: boolean;
}

/** The tables the threads of one server share, made once by the main thread. */
export function sharedRateTables(): ThreadSetup["rateTables"] {
  return { keys: new RateLimiter().table, failedKeys: new RateLimiter().table };
}

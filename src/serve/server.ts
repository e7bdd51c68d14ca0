import { sharedStoreMarks } from "../access/store-health.ts";
import { startAdminListener, type AdminListener } from "../admin/admin-listener.ts";
import { dataSourceName } from "../config/paths.ts";
import type { ServeConfig } from "../config/serve-config.ts";
import { onThisThread, type IndexLoader, type LiveIndex } from "../index/live-index.ts";
import { lineBuffer } from "../log/line-buffer.ts";
import { LogOutput } from "../log/log-output.ts";
import { createLogger, type Logger } from "../log/logger.ts";
import { Metrics } from "../metrics/metrics.ts";
import { isPostgresUrl } from "../store/open-store.ts";
import { PUBLIC_ROUTES } from "../http/routes.ts";
import type { FromWorker, ThreadSetup, ToWorker } from "./messages.ts";
import { claimPort, listenableHost } from "./port.ts";
import { loadTlsAtStart, loadTlsPair, type TlsPair } from "./tls.ts";
import { sharedRateTables, startServingThread, type ServingThread } from "./serving-thread.ts";
import { offThreadLoader } from "./index-loader.ts";

/** How often the main thread looks for a replaced data file. */
const DATA_POLL_MS = 1000;
/** How long after start-up the AS index of the data is built (see LiveIndex.buildAsnIndex). */
const AS_INDEX_DELAY_MS = 100;
/** How long a worker thread may take to start listening. */
const WORKER_START_MS = 30_000;
/**
 * How often the checkpoint thread copies a SQLite state file's WAL into the file (see
 * wal-checkpoints.ts). A busy server appends a few MiB a second; SQLite's own threshold
 * (1,000 pages, 4 MiB) came every second or two.
 */
const CHECKPOINT_INTERVAL_MS = 500;

/** What a server is started with, besides its configuration. */
export interface ServerEnvironment {
  /**
   * Where log lines go, a batch of lines a call; `written` is called once the reader has
   * taken them, or with true once they cannot be written (the reader gone): those are
   * counted as dropped, as are batches waiting past a bound (see LogOutput).
   */
  readonly writeLog: (text: string, written: (failed?: boolean) => void) => void;
  readonly now: () => Date;
  readonly version: string;
  /** Whether the log goes to systemd's journal: lines then carry their priority (see log/journal.ts). */
  readonly journal?: boolean;
  /**
   * Loads the data file and watches it; a reload reports through `onReload`, and loads
   * with `loader` (a thread of its own: see index-loader.ts).
   */
  readonly openIndex: (onReload: ConstructorParameters<typeof LiveIndex>[1], loader: IndexLoader) => LiveIndex;
  /** The worker threads' module (default: worker-thread.ts beside this file). */
  readonly workerEntry?: string;
}

const WORKER_ENTRY = new URL("./worker-thread.ts", import.meta.url).href;

/** A started server; `stop` finishes the requests in flight and commits their units. */
export interface RunningServer {
  readonly url: string;
  readonly port: number;
  /** The admin listener's URL, or null when `--admin-port off`. */
  readonly adminUrl: string | null;
  readonly logger: Logger;
  /** The active keys when the server started, for the start-up warning. */
  readonly keyCount: number;
  readonly index: LiveIndex;
  /** The main thread's metrics (its region of the shared table). */
  readonly metrics: Metrics;
  /** What SIGHUP does: loads the data file again in every thread, and the TLS certificate. */
  reload(): void;
  /** Resolves with a reason if a worker thread fails while serving; the server should stop. */
  readonly failed: Promise<string>;
  stop(): Promise<void>;
}

/**
 * A server on every core, as one server (CONTRACT §8): the main thread loads the data
 * once into shared memory, binds the port, and serves like every worker thread; each
 * thread listens on the same port (SO_REUSEPORT within this process, so the kernel
 * spreads connections over them) with its own app and store connection, over one index,
 * one set of rate-limit buckets and one table of metrics. The main thread alone writes
 * the logs, reloads the data (loaded on a loader thread, then handed to every thread)
 * and stops the others.
 */
export async function startServer(requested: ServeConfig, environment: ServerEnvironment): Promise<RunningServer> {
  const config = { ...requested, host: listenableHost(requested.host) };
  const metricsTable = Metrics.table(PUBLIC_ROUTES, config.workers);
  // The main thread writes every thread's log lines; it counts what it drops in its own slot.
  const mainMetrics = new Metrics(metricsTable, 0);
  const output = new LogOutput(
    environment.writeLog,
    (lines) => mainMetrics.addDroppedLogLines(lines),
    undefined,
    (bytes) => mainMetrics.setLogBacklog(bytes),
  );
  const logLines = lineBuffer(output.write);
  const logger = createLogger(config.logLevel, logLines.write, environment.now, environment.journal ?? false);
  const workers: WorkerThread[] = [];
  const workerEntry = environment.workerEntry ?? WORKER_ENTRY;
  const index = environment.openIndex((outcome) => {
    if (outcome.ok) {
      for (const worker of workers) worker.post({ type: "index", image: outcome.index.image });
      logger.log("info", "data reloaded", { data: dataSourceName(config.dataPath, outcome.index.info.version), data_version: outcome.index.info.dataVersion, data_built_at: outcome.index.info.builtAt });
    } else {
      logger.log("error", "data reload failed; still serving the data loaded before", { data: dataSourceName(config.dataPath, index.current().info.version), error: String((outcome.error as Error)?.message ?? outcome.error) });
    }
  }, offThreadLoader(workerEntry));
  // Loading read the data file whole and built the index from it: give that memory back
  // before serving rather than carry it as resident size.
  Bun.gc(true);
  let tls = config.tls && loadTlsAtStart(config.tls, environment.now());
  if (tls) mainMetrics.setTlsCertificateExpiry(tls.expiresAtMs);
  const setup: ThreadSetup = {
    config,
    // Claimed by the main thread just before it listens (below); the worker threads get it then.
    port: config.port,
    tls,
    thread: 0,
    image: index.current().image,
    metrics: metricsTable,
    rateTables: sharedRateTables(),
    storeMarks: sharedStoreMarks(config.workers),
    version: environment.version,
    journal: environment.journal ?? false,
  };
  // Its failures come as they are: opening the state file names the file (see
  // sqlite-faults.ts), and listening says what is wrong with the port (see port.ts).
  // Every listener of this server has SO_REUSEPORT (the threads share the port, and a
  // new certificate's listener joins before the old one leaves), so the port is first
  // bound alone, once, by the main thread, in the turn it listens in, once its store is
  // open and its keys loaded: a port in use by anything, another iplookup included, is
  // refused then and never shared, and until then nothing listens (a connection is
  // refused, not taken and dropped).
  const main: ServingThread = await startServingThread(setup, () => index.current(), logger, environment.now, () => claimPort(config.host, config.port));
  let checkpoints: HelperThread | null = null;
  let admin: AdminListener | null = null;
  /** For a start that fails part-way: stops what has started, the checkpoint thread last (a thread left running keeps the process alive). */
  const stopStarted = async (): Promise<void> => {
    await Promise.all([admin?.stop(), main.stop(), ...workers.map((worker) => worker.stop())]);
    await checkpoints?.stop();
    logLines.flush();
  };
  // Every connection of this server leaves the WAL's checkpoints to this thread, started
  // once the main thread's connection has created the file.
  try {
    if (isSqliteFile(config.statePath)) checkpoints = await startCheckpointThread(workerEntry, config.statePath, logger, mainMetrics);
  } catch (error) {
    await stopStarted();
    throw error;
  }
  const port = Number(main.url.port);
  let reportFailure: (reason: string) => void = () => {};
  const failed = new Promise<string>((resolve) => (reportFailure = resolve));
  try {
    for (let thread = 1; thread < config.workers; thread++) {
      workers.push(await startWorker(workerEntry, { ...setup, port, thread }, logLines.write, reportFailure));
    }
  } catch (error) {
    await stopStarted();
    throw error;
  }
  // The admin API and console: on this thread only (admin traffic is light). Its changes
  // reach every thread through the store's change counter, as the CLI's do.
  if (config.adminPort !== null) {
    try {
      admin = await startAdminListener({
        host: config.adminHost,
        port: config.adminPort,
        statePath: config.statePath,
        logger,
        now: environment.now,
        version: environment.version,
        workers: config.workers,
        dataInfo: () => index.current().info,
        index: () => index.current(),
        corrections: () => main.corrections(),
        tls: tls || undefined,
        // Test events sent from the admin API or the console count as serve's own attempts.
        onWebhookAttempt: (state) => mainMetrics.addWebhookAttempt(state),
      });
    } catch (error) {
      await stopStarted();
      throw error;
    }
  }
  // Webhook deliveries and the key.expiring sweep: a thread of their own (see events.ts).
  let events: HelperThread;
  try {
    events = await startEventsThread(workerEntry, config, environment.journal ?? false, logLines.write, mainMetrics, reportFailure);
  } catch (error) {
    await stopStarted();
    throw error;
  }
  index.watch(DATA_POLL_MS);
  // The AS index of the data loaded at start, built once the server answers (the first
  // lookups need not wait for it), on a loader thread, then handed to the worker threads
  // with the image (unless a reload came first, which built its own).
  let stopping = false;
  const asnIndexTimer = setTimeout(() => {
    const loaded = index.current();
    void index
      .buildAsnIndex()
      .catch((error) => {
        // Stopped meanwhile: the build was cut short, and nothing needs it.
        if (stopping) return;
        logger.log("warn", "the AS index could not be built on a thread of its own; building it on the main thread", { error: String((error as Error)?.message ?? error) });
        return onThisThread.buildAsn(loaded);
      })
      .then(() => {
        if (stopping || index.current() !== loaded) return;
        for (const worker of workers) worker.post({ type: "index", image: loaded.image });
      });
  }, AS_INDEX_DELAY_MS);
  return {
    url: main.url.href,
    port,
    adminUrl: admin?.url.href ?? null,
    logger,
    keyCount: main.keys.size,
    index,
    metrics: mainMetrics,
    failed,
    reload() {
      void index.reload();
      if (!config.tls) return;
      let renewed: TlsPair;
      try {
        renewed = loadTlsPair(config.tls, environment.now());
      } catch (error) {
        logger.log("error", "tls reload failed; still serving the certificate loaded before", { error: (error as Error).message });
        return;
      }
      if (renewed.cert === tls?.cert && renewed.key === tls.key) return;
      tls = renewed;
      mainMetrics.setTlsCertificateExpiry(renewed.expiresAtMs);
      main.relisten(renewed);
      admin?.relisten(renewed);
      for (const worker of workers) worker.post({ type: "tls", tls: renewed });
      logger.log("info", "tls reloaded", { cert: config.tls.certPath });
    },
    async stop() {
      stopping = true;
      clearTimeout(asnIndexTimer);
      index.stop();
      await Promise.all([admin?.stop(), main.stop(), ...workers.map((worker) => worker.stop()), events.stop()]);
      // Last: the units the stop committed are checkpointed too.
      await checkpoints?.stop();
      logger.log("info", "stopped");
      logLines.flush();
    },
  };
}

/** Whether a --state location is a SQLite file (not a PostgreSQL URL, not `:memory:`). */
function isSqliteFile(location: string): boolean {
  return !isPostgresUrl(location) && location !== ":memory:";
}

/** A thread of the server that serves no request: the checkpoint thread, the events thread. */
interface HelperThread {
  stop(): Promise<void>;
}

/** Starts the thread that checkpoints the state file's WAL; resolves once it runs. */
function startCheckpointThread(workerEntry: string, path: string, logger: Logger, metrics: Metrics): Promise<HelperThread> {
  return startHelperThread(workerEntry, { type: "checkpoints", path, intervalMs: CHECKPOINT_INTERVAL_MS }, {
    name: "the checkpoint thread",
    refused: (error) => `the checkpoint thread could not open ${path}: ${error}`,
    crashed: (error) => logger.log("error", "the checkpoint thread failed; the state file's WAL is checkpointed when the server stops", { state: path, error }),
    onMessage(message) {
      if (message.type === "checkpoint-failed") logger.log("error", "a checkpoint of the state file failed; the next is tried shortly", { state: path, error: message.error });
      else if (message.type === "checkpoint-stats") metrics.setWalCheckpoints(message.stats, message.walBytes);
    },
  });
}

/**
 * Starts the thread of the webhook deliveries and the key.expiring sweep (see events.ts);
 * resolves once it runs. Its log lines join the others; its attempts are counted in the
 * main thread's metrics. A crash stops the server, as a serving thread's does (and as
 * one on the main thread did): the outbox keeps what was not delivered for the restart.
 */
function startEventsThread(
  workerEntry: string,
  config: ServeConfig,
  journal: boolean,
  writeLog: (text: string) => void,
  metrics: Metrics,
  reportFailure: (reason: string) => void,
): Promise<HelperThread> {
  return startHelperThread(workerEntry, { type: "events", statePath: config.statePath, logLevel: config.logLevel, journal }, {
    name: "the events thread",
    refused: (error) => error,
    crashed: (error) => reportFailure(`the events thread failed: ${error}`),
    onMessage(message) {
      if (message.type === "log") writeLog(message.text);
      else if (message.type === "webhook-attempt") metrics.addWebhookAttempt(message.state);
    },
  });
}

interface HelperThreadRoles {
  /** Names the thread in the error of a start that timed out or crashed. */
  readonly name: string;
  /** The error of a start the thread refused ("failed"), from the thread's message. */
  readonly refused: (error: string) => string;
  /** Told when the thread crashes once running. */
  readonly crashed: (error: string) => void;
  /** Its other messages. */
  readonly onMessage: (message: FromWorker) => void;
}

/** Starts a helper thread on `job`; resolves once it says "listening", rejects if it cannot start. */
async function startHelperThread(workerEntry: string, job: ToWorker, roles: HelperThreadRoles): Promise<HelperThread> {
  const worker = new Worker(workerEntry);
  let onStopped = () => {};
  const stopped = new Promise<void>((resolve) => (onStopped = resolve));
  const running = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${roles.name} did not start within ${WORKER_START_MS / 1000} s`)), WORKER_START_MS);
    worker.onmessage = (event: MessageEvent<FromWorker>) => {
      const message = event.data;
      switch (message.type) {
        case "listening":
          clearTimeout(timer);
          return resolve();
        case "failed":
          clearTimeout(timer);
          return reject(new Error(roles.refused(message.error)));
        case "stopped":
          return onStopped();
        default:
          return roles.onMessage(message);
      }
    };
    worker.onerror = (event) => {
      clearTimeout(timer);
      reject(new Error(`${roles.name} failed: ${event.message}`));
      roles.crashed(event.message);
      onStopped();
    };
  });
  worker.postMessage(job);
  try {
    await running;
  } catch (error) {
    worker.terminate();
    throw error;
  }
  return {
    async stop() {
      worker.postMessage({ type: "stop" } satisfies ToWorker);
      await stopped;
      worker.terminate();
    },
  };
}

interface WorkerThread {
  post(message: ToWorker): void;
  stop(): Promise<void>;
}

/** Starts a worker thread and resolves once it listens; rejects if it cannot. */
async function startWorker(
  workerEntry: string,
  setup: ThreadSetup,
  writeLog: (text: string) => void,
  reportFailure: (reason: string) => void,
): Promise<WorkerThread> {
  const worker = new Worker(workerEntry);
  let stopping = false;
  let onStopped = () => {};
  const stopped = new Promise<void>((resolve) => (onStopped = resolve));
  const listening = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker thread ${setup.thread} did not start within ${WORKER_START_MS / 1000} s`)), WORKER_START_MS);
    worker.onmessage = (event: MessageEvent<FromWorker>) => {
      const message = event.data;
      switch (message.type) {
        case "log":
          return writeLog(message.text);
        case "listening":
          clearTimeout(timer);
          return resolve();
        case "failed":
          clearTimeout(timer);
          // Told as the thread found it: a bind's failure is the port's already (see serving-thread.ts).
          return reject(new Error(message.error));
        case "stopped":
          return onStopped();
      }
    };
    worker.onerror = (event) => {
      const reason = `worker thread ${setup.thread} failed: ${event.message}`;
      clearTimeout(timer);
      reject(new Error(reason));
      if (!stopping) reportFailure(reason);
      onStopped();
    };
  });
  worker.postMessage({ type: "start", setup } satisfies ToWorker);
  try {
    await listening;
  } catch (error) {
    worker.terminate();
    throw error;
  }
  return {
    post: (message) => worker.postMessage(message),
    async stop() {
      if (stopping) return stopped;
      stopping = true;
      worker.postMessage({ type: "stop" } satisfies ToWorker);
      await stopped;
      worker.terminate();
    },
  };
}

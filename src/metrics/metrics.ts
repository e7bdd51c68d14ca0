import type { WalCheckpointStats } from "../store/wal-checkpoints.ts";
import type { DescriptorUse } from "./process-descriptors.ts";
/**
 * The service's metrics, kept in memory and written in the Prometheus text format
 * (version 0.0.4). What each one means is in the README.
 */

/** Upper bounds of the latency histogram's buckets, in seconds. */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/** Methods counted by name; any other counts as OTHER, so clients cannot add series. */
const METHODS = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "OTHER"] as const;
/** Statuses 100 to 599 are counted, each in its own series. */
const FIRST_STATUS = 100;
const STATUSES = 500;

export interface MetricsSnapshotInput {
  readonly now: Date;
  readonly dataBuiltAt: string;
  readonly dataVersion: string;
  /** The sources' names and versions, joined. */
  readonly dataSourceVersions: string;
  /** Each source's name and build time ("" when the source does not say). */
  readonly dataSources: ReadonlyArray<{ readonly name: string; readonly builtAt: string }>;
  readonly version: string;
  /** The process's file descriptors, when known (see descriptorUse). */
  readonly descriptors?: DescriptorUse | null;
}

/**
 * Where a server's counters live, shared by its threads: posted to a worker thread it
 * is shared, not copied. Each thread writes only its own region of the buffer (no
 * locks, no atomics: one writer per number), and a scrape on any thread adds all
 * regions up, so every scrape shows the whole server and no counter goes down.
 */
export interface MetricsTable {
  readonly buffer: SharedArrayBuffer;
  /** The route patterns counted by name; the last series of each kind is "other". */
  readonly routes: readonly string[];
  readonly threads: number;
  /** When the server started (ms since the epoch). */
  readonly startedAt: number;
}

/**
 * The service's metrics, written in the Prometheus text format (version 0.0.4). What
 * each one means is in the README.
 *
 * A region holds, as float64: a request counter per route, method and status; per route
 * the histogram's bucket counts (each observation counted once, in the first bucket it
 * fits; cumulated when written), its sum and its count; then addresses, units, dropped
 * log lines, failed data updates, the time of the last successful one, the log's
 * backlog, webhook attempts by outcome, the SQLite state file's checkpoints (WAL_AT), and
 * the served certificate's expiry (TLS_EXPIRY_AT).
 */
export class Metrics {
  private readonly region: Float64Array;
  private readonly routeIndex: Map<string, number>;
  private readonly labels: readonly string[];
  private readonly histogramsAt: number;
  private readonly totalsAt: number;

  /**
   * @param table the table to count in (`Metrics.table(…)`), or the routes for a table of
   *   one thread
   * @param thread which region this thread writes
   */
  constructor(
    readonly table: MetricsTable = Metrics.table([], 1),
    thread = 0,
  ) {
    const routes = table.routes.length + 1;
    this.labels = [...table.routes, "other"];
    this.routeIndex = new Map(table.routes.map((route, i) => [route, i]));
    this.histogramsAt = routes * METHODS.length * STATUSES;
    this.totalsAt = this.histogramsAt + routes * HISTOGRAM_SIZE;
    const size = regionSize(table.routes.length);
    this.region = new Float64Array(table.buffer, thread * size * 8, size);
  }

  /** A new table for `threads` threads counting `routes` by name. */
  static table(routes: readonly string[], threads: number, startedAt = Date.now()): MetricsTable {
    return { buffer: new SharedArrayBuffer(regionSize(routes.length) * threads * 8), routes: [...routes], threads, startedAt };
  }

  /** Counts one answered request; `route` is a known route pattern or "other". */
  observeRequest(route: string, method: string, status: number, seconds: number): void {
    const r = this.routeIndex.get(route) ?? this.labels.length - 1;
    const s = status >= FIRST_STATUS && status < FIRST_STATUS + STATUSES ? status - FIRST_STATUS : STATUSES - 1;
    const region = this.region;
    region[(r * METHODS.length + methodIndex(method)) * STATUSES + s]!++;
    const histogram = this.histogramsAt + r * HISTOGRAM_SIZE;
    let bucket = 0;
    while (bucket < LATENCY_BUCKETS.length && seconds > (LATENCY_BUCKETS[bucket] as number)) bucket++;
    if (bucket < LATENCY_BUCKETS.length) region[histogram + bucket]!++;
    region[histogram + LATENCY_BUCKETS.length]! += seconds;
    region[histogram + LATENCY_BUCKETS.length + 1]!++;
  }

  /** Addresses answered by lookups (a batch of N counts N). */
  addLookups(count: number): void {
    this.region[this.totalsAt]! += count;
  }

  addUnits(count: number): void {
    this.region[this.totalsAt + 1]! += count;
  }

  /** Log lines dropped because the log's reader did not keep up, or is gone. */
  addDroppedLogLines(count: number): void {
    this.region[this.totalsAt + 2]! += count;
  }

  /**
   * Log text handed to the log's reader and not yet taken (bytes). Only the main thread,
   * which writes the logs, sets it, in its own region; the others keep 0.
   */
  setLogBacklog(bytes: number): void {
    this.region[this.totalsAt + 5] = bytes;
  }

  /** A background data update (`serve --update-every`) that failed; counted by the main thread. */
  addDataUpdateFailure(): void {
    this.region[this.totalsAt + 3]! += 1;
  }

  /**
   * When a background data update last succeeded (Unix seconds). Only the main thread
   * sets it, in its own region; every other region keeps 0, so the sum of the regions
   * is the value.
   */
  setDataUpdateSuccess(unixSeconds: number): void {
    this.region[this.totalsAt + 4] = unixSeconds;
  }

  /**
   * A webhook delivery attempt by serve's deliverer (told by its thread, counted by the main thread): delivered, failed and
   * to be retried, or given up (failed for good).
   */
  addWebhookAttempt(outcome: "delivered" | "pending" | "failed"): void {
    this.region[this.totalsAt + WEBHOOK_OUTCOMES.indexOf(outcome) + 6]! += 1;
  }

  /**
   * What a SQLite state file's checkpoint thread has done (see wal-checkpoints.ts), as
   * it last said; the main thread sets it in its own region. A server on PostgreSQL
   * never sets it, and writes none of these metrics.
   */
  setWalCheckpoints(stats: Readonly<WalCheckpointStats>, walBytes: number): void {
    const at = this.totalsAt + WAL_AT;
    const region = this.region;
    region[at] = 1;
    region[at + 1] = stats.passive;
    region[at + 2] = stats.restarts;
    region[at + 3] = stats.truncations;
    region[at + 4] = stats.busy;
    region[at + 5] = stats.longestMs / 1000;
    region[at + 6] = walBytes;
  }

  /** When the certificate served (--tls-cert) expires, in ms since the epoch; set by the main thread at start and at each renewal. */
  setTlsCertificateExpiry(expiresAtMs: number): void {
    this.region[this.totalsAt + TLS_EXPIRY_AT] = expiresAtMs / 1000;
  }

  /** Every thread's region added up. */
  private totals(): Float64Array {
    const size = this.region.length;
    const sum = new Float64Array(size);
    const all = new Float64Array(this.table.buffer);
    for (let thread = 0; thread < this.table.threads; thread++) {
      const from = thread * size;
      for (let i = 0; i < size; i++) sum[i]! += all[from + i] as number;
    }
    return sum;
  }

  render(input: MetricsSnapshotInput): string {
    const lines: string[] = [];
    const metric = (name: string, type: string, help: string, samples: string[]) => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, ...samples);
    };
    const totals = this.totals();
    const counters: string[] = [];
    const histogramLines: string[] = [];
    this.labels.forEach((route, r) => {
      METHODS.forEach((method, m) => {
        const from = (r * METHODS.length + m) * STATUSES;
        for (let s = 0; s < STATUSES; s++) {
          const value = totals[from + s] as number;
          if (value > 0) counters.push(`iplookup_http_requests_total{route="${escapeLabel(route)}",method="${method}",status="${FIRST_STATUS + s}"} ${value}`);
        }
      });
      const histogram = this.histogramsAt + r * HISTOGRAM_SIZE;
      const count = totals[histogram + LATENCY_BUCKETS.length + 1] as number;
      if (count === 0) return;
      let cumulative = 0;
      LATENCY_BUCKETS.forEach((bound, i) => {
        cumulative += totals[histogram + i] as number;
        histogramLines.push(`iplookup_http_request_duration_seconds_bucket{route="${escapeLabel(route)}",le="${bound}"} ${cumulative}`);
      });
      histogramLines.push(
        `iplookup_http_request_duration_seconds_bucket{route="${escapeLabel(route)}",le="+Inf"} ${count}`,
        `iplookup_http_request_duration_seconds_sum{route="${escapeLabel(route)}"} ${totals[histogram + LATENCY_BUCKETS.length]}`,
        `iplookup_http_request_duration_seconds_count{route="${escapeLabel(route)}"} ${count}`,
      );
    });
    metric("iplookup_http_requests_total", "counter", "HTTP requests answered, by route, method and status.", counters);
    metric("iplookup_http_request_duration_seconds", "histogram", "Time from receiving a request to its response, by route.", histogramLines);
    metric("iplookup_addresses_looked_up_total", "counter", "Addresses answered by /v1/lookup and /v1/lookup/batch.", [`iplookup_addresses_looked_up_total ${totals[this.totalsAt]}`]);
    metric("iplookup_units_consumed_total", "counter", "Units charged to keys by this server.", [`iplookup_units_consumed_total ${totals[this.totalsAt + 1]}`]);
    metric("iplookup_log_lines_dropped_total", "counter", "Log lines dropped because the log's reader did not keep up, or is gone (stderr closed).", [`iplookup_log_lines_dropped_total ${totals[this.totalsAt + 2]}`]);
    metric("iplookup_log_backlog_bytes", "gauge", "Log text waiting for the log's reader (at most 1 MiB; past it, lines are dropped).", [`iplookup_log_backlog_bytes ${totals[this.totalsAt + 5]}`]);
    metric("iplookup_data_update_last_success_timestamp_seconds", "gauge", "When a background data update (--update-every) last succeeded (Unix time; 0: not yet).", [
      `iplookup_data_update_last_success_timestamp_seconds ${totals[this.totalsAt + 4]}`,
    ]);
    metric("iplookup_data_update_failures_total", "counter", "Background data updates (--update-every) that failed.", [`iplookup_data_update_failures_total ${totals[this.totalsAt + 3]}`]);
    metric(
      "iplookup_webhook_attempts_total",
      "counter",
      "Webhook delivery attempts by this server, by outcome: delivered (2xx), retry (failed, tried again later), given_up (failed 24 hours after the event).",
      WEBHOOK_OUTCOMES.map((outcome, i) => `iplookup_webhook_attempts_total{outcome="${WEBHOOK_OUTCOME_LABELS[i]}"} ${totals[this.totalsAt + 6 + i]}`),
    );
    const wal = this.totalsAt + WAL_AT;
    if (totals[wal]! > 0) {
      metric(
        "iplookup_state_wal_checkpoints_total",
        "counter",
        "Checkpoints of the SQLite state file's WAL that completed, by mode: passive (every half second), restart (once the WAL passes 4 MiB), truncate (an idle server's WAL emptied).",
        (["passive", "restart", "truncate"] as const).map((mode, i) => `iplookup_state_wal_checkpoints_total{mode="${mode}"} ${totals[wal + 1 + i]}`),
      );
      metric("iplookup_state_wal_checkpoints_busy_total", "counter", "Restart and truncate checkpoints that gave up on a lock held by a writer or a reader (tried again later).", [
        `iplookup_state_wal_checkpoints_busy_total ${totals[wal + 4]}`,
      ]);
      metric("iplookup_state_wal_checkpoint_longest_seconds", "gauge", "The longest restart or truncate checkpoint since the server started: the most a charge waited for one.", [
        `iplookup_state_wal_checkpoint_longest_seconds ${totals[wal + 5]}`,
      ]);
      metric("iplookup_state_wal_bytes", "gauge", "The length of the SQLite state file's -wal file at the last checkpoint.", [`iplookup_state_wal_bytes ${totals[wal + 6]}`]);
    }
    const tlsExpiry = totals[this.totalsAt + TLS_EXPIRY_AT]!;
    if (tlsExpiry > 0) {
      metric("iplookup_tls_certificate_expiry_timestamp_seconds", "gauge", "When the certificate served (--tls-cert) expires (Unix time); SIGHUP loads a renewed one.", [
        `iplookup_tls_certificate_expiry_timestamp_seconds ${tlsExpiry}`,
      ]);
    }
    const built = Date.parse(input.dataBuiltAt);
    metric("iplookup_data_built_timestamp_seconds", "gauge", "When the loaded data set was built (Unix time).", [`iplookup_data_built_timestamp_seconds ${Math.floor(built / 1000)}`]);
    metric("iplookup_data_age_seconds", "gauge", "Age of the loaded data set.", [`iplookup_data_age_seconds ${Math.max(0, Math.floor((input.now.getTime() - built) / 1000))}`]);
    const sourceAges = input.dataSources
      .filter((source) => !Number.isNaN(Date.parse(source.builtAt)))
      .map((source) => `iplookup_data_source_age_seconds{source="${escapeLabel(source.name)}"} ${Math.max(0, Math.floor((input.now.getTime() - Date.parse(source.builtAt)) / 1000))}`);
    metric("iplookup_data_source_age_seconds", "gauge", "Age of each source of the loaded data set, from the source's own build time.", sourceAges);
    if (input.descriptors) {
      // The names of Prometheus's own process collector, which alerting rules already use.
      metric("process_open_fds", "gauge", "Open file descriptors (connections included).", [`process_open_fds ${input.descriptors.open}`]);
      metric("process_max_fds", "gauge", "The process's limit on open file descriptors (raised to the hard limit at start).", [`process_max_fds ${input.descriptors.max}`]);
    }
    metric("iplookup_process_start_time_seconds", "gauge", "When this process started (Unix time).", [`iplookup_process_start_time_seconds ${Math.floor(this.table.startedAt / 1000)}`]);
    metric("iplookup_build_info", "gauge", "Always 1; the labels name the build and the loaded data.", [
      `iplookup_build_info{version="${escapeLabel(input.version)}",data_version="${escapeLabel(input.dataVersion)}",data_sources="${escapeLabel(input.dataSourceVersions)}"} 1`,
    ]);
    return `${lines.join("\n")}\n`;
  }
}

/** The outcomes of a webhook attempt (the delivery's state after it), and their labels. */
const WEBHOOK_OUTCOMES = ["delivered", "pending", "failed"] as const;
const WEBHOOK_OUTCOME_LABELS = ["delivered", "retry", "given_up"] as const;

/**
 * Where the checkpoint slots start among the totals: set (1) or not, then passive,
 * restart and truncate checkpoints, busy ones, the longest in seconds, the WAL's bytes.
 */
const WAL_AT = 6 + WEBHOOK_OUTCOMES.length;
const WAL_SLOTS = 7;
/** Where the served certificate's expiry is among the totals (0: no TLS). */
const TLS_EXPIRY_AT = WAL_AT + WAL_SLOTS;

/** A route's histogram: a count per bucket, the sum, the count. */
const HISTOGRAM_SIZE = LATENCY_BUCKETS.length + 2;

/** Numbers in one thread's region, for `routes` named routes and "other". */
function regionSize(routes: number): number {
  return (routes + 1) * (METHODS.length * STATUSES + HISTOGRAM_SIZE) + TLS_EXPIRY_AT + 1;
}

function methodIndex(method: string): number {
  switch (method) {
    case "GET":
      return 0;
    case "HEAD":
      return 1;
    case "POST":
      return 2;
    case "PUT":
      return 3;
    case "DELETE":
      return 4;
    case "PATCH":
      return 5;
    case "OPTIONS":
      return 6;
    default:
      return 7;
  }
}

function escapeLabel(value: string): string {
  return value.replaceAll("\\", "\\\\").replaceAll('"', '\\"').replaceAll("\n", "\\n");
}

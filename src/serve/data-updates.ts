import { existsSync } from "node:fs";
import { constants } from "node:os";
import { monotonicMs } from "../access/monotonic-clock.ts";
import { ConfigError } from "../config/config-error.ts";
import { formatDuration } from "../config/duration.ts";
import { isEmbedded } from "../config/paths.ts";
import { readRecipe } from "../data-file/recipe.ts";
import { redactSecrets, unkeptSignature } from "../importer/fetch/locations.ts";
import { updateRunning } from "../importer/update-lock.ts";
import type { Logger } from "../log/logger.ts";
import type { Metrics } from "../metrics/metrics.ts";

/**
 * `serve --update-every DURATION`: the main thread runs `data update --data PATH` now
 * and then, in a child process started the way the user started iplookup (the server's
 * memory never carries an import: a city data set's takes a gigabyte and more). The
 * child only installs the new file; the server swaps it in as it does any replaced
 * data file (LiveIndex's watch). Each outcome is logged and counted in /metrics.
 *
 * When: the first check comes when the loaded data is DURATION old (a server restarted
 * daily with `--update-every 24h` still checks), but not before a minute after start
 * (or DURATION, if shorter); then every DURATION. Each wait varies by ±10% at random, so
 * that many servers started together do not ask a publisher at the same moment. One
 * update runs at a time; one still running when the next is due makes that one wait.
 */

/** How much each wait varies, either way. */
const JITTER = 0.1;
/** The first check waits at least this long after start (or the interval, if shorter). */
const FIRST_CHECK_AFTER_MS = 60_000;
/**
 * An update still running after this long is stopped: two hours, or more when
 * --download-timeout allows a longer download (each download ends by itself within it).
 */
const MAX_RUN_MS = 2 * 3_600_000;
/** How much of a child's output is kept, to log its last line. */
const KEEP_OUTPUT = 64 * 1024;
/** setTimeout's longest wait; longer ones are waited in steps. */
const LONGEST_TIMER_MS = 2 ** 30;

/**
 * Refuses, as a bad flag (exit 2), what cannot be updated: the data embedded in the
 * binary, a data file that records no sources, and one with a source that every update
 * refuses (an expiring signed URL whose signature was not stored: unkeptSignature), which
 * would otherwise be logged as a failed update every interval. `name` is the setting as
 * it was given (givenAs: `--update-every`, or `IPLOOKUP_UPDATE_EVERY`), which the
 * message names.
 */
export function checkUpdatable(dataPath: string, name: string): void {
  if (isEmbedded(dataPath)) {
    throw new ConfigError(
      `${name}: the data embedded in the binary cannot be updated; import data into a file ('data import --data PATH …') and serve it with --data PATH`,
    );
  }
  if (!existsSync(dataPath)) return; // the server's own start says that there is no data file
  let recipe;
  try {
    recipe = readRecipe(dataPath);
  } catch (error) {
    throw new ConfigError(`${name}: ${(error as Error).message}`);
  }
  if (recipe === null) {
    throw new ConfigError(
      `${name}: ${dataPath} records no sources to update from (it was built by 'bun run data:default', or before data files recorded them); build it with 'data import --data ${dataPath} …' first`,
    );
  }
  for (const [i, source] of recipe.sources.entries()) {
    for (const file of source.files) {
      const unkept = unkeptSignature(file);
      if (unkept !== undefined) {
        throw new ConfigError(`${name}: ${dataPath} cannot be updated: source ${i + 1} (${redactSecrets(file.location)}): ${unkept}`);
      }
    }
  }
}

export interface DataUpdatesOptions {
  /** The interval (ms). */
  readonly every: number;
  /** `--download-timeout` (ms) and `--max-expanded` (bytes) for the child's `data update`. */
  readonly downloadTimeout?: number;
  readonly maxExpanded?: number;
  readonly dataPath: string;
  /** The command that starts iplookup (CliContext.selfCommand). */
  readonly command: readonly string[];
  /** The child's environment (IPLOOKUP_DOWNLOAD_AUTH comes with it). */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly logger: Logger;
  /** The main thread's metrics. */
  readonly metrics: Metrics;
  /** When the loaded data was built (ISO 8601). */
  readonly dataBuiltAt: string;
  /** The server's --state: the child announces the outcome to the webhooks there (data.updated, data.update_failed). */
  readonly statePath?: string;
  /** The wall clock: how old the loaded data is. */
  readonly now?: () => Date;
  /**
   * Milliseconds that only move forward, for the waits between updates (default:
   * `monotonicMs`), so a step of the wall clock neither delays an update nor brings it early.
   */
  readonly monotonicMs?: () => number;
  readonly random?: () => number;
}

export interface DataUpdates {
  /** Stops the schedule; an update under way is stopped too. */
  stop(): Promise<void>;
}

export function startDataUpdates(options: DataUpdatesOptions): DataUpdates {
  const now = options.now ?? (() => new Date());
  const monotonic = options.monotonicMs ?? monotonicMs;
  const random = options.random ?? Math.random;
  const jittered = (ms: number) => Math.max(0, Math.round(ms * (1 + JITTER * (2 * random() - 1))));
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  let child: ReturnType<typeof Bun.spawn> | undefined;
  let running: Promise<void> | undefined;

  const schedule = (ms: number) => {
    if (stopped) return;
    const dueAt = monotonic() + ms;
    const step = () => {
      const left = dueAt - monotonic();
      if (left > 0) {
        timer = setTimeout(step, Math.min(left, LONGEST_TIMER_MS));
        timer.unref?.();
        return;
      }
      running = runOnce().finally(() => {
        running = undefined;
        schedule(jittered(options.every));
      });
    };
    step();
  };

  const runOnce = async () => {
    const began = monotonic();
    // A `data update` run by hand (or a timer) holds the file: this round leaves it be.
    // (A lock that cannot be looked at, in a folder this user cannot write, is the
    // child's to report.)
    let busy = false;
    try {
      busy = updateRunning(options.dataPath);
    } catch {
      busy = false;
    }
    if (busy) {
      options.logger.log("info", "data update skipped: another update of the data file is running", { data: options.dataPath });
      return;
    }
    const args = [...options.command, "data", "update", "--data", options.dataPath, "--json"];
    if (options.downloadTimeout !== undefined) args.push("--download-timeout", `${Math.ceil(options.downloadTimeout / 1000)}s`);
    if (options.maxExpanded !== undefined) args.push("--max-expanded", String(options.maxExpanded));
    try {
      // The state in the environment, not in the arguments: a PostgreSQL URL's password
      // would show in the process list.
      const env = { ...options.env, ...(options.statePath ? { IPLOOKUP_STATE: options.statePath } : {}) };
      child = Bun.spawn(args, { env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    } catch (error) {
      return failed(`cannot start '${args.join(" ")}': ${(error as Error).message}`, null);
    }
    const proc = child;
    const longest = Math.max(MAX_RUN_MS, 3 * (options.downloadTimeout ?? 0));
    let overran = false;
    const limit = setTimeout(() => {
      overran = true;
      proc.kill("SIGKILL");
    }, longest);
    limit.unref?.();
    const [stdout, stderr, code] = await Promise.all([tail(proc.stdout as ReadableStream<Uint8Array>), tail(proc.stderr as ReadableStream<Uint8Array>), proc.exited]);
    clearTimeout(limit);
    child = undefined;
    if (stopped) return;
    const seconds = Number(((monotonic() - began) / 1000).toFixed(1));
    if (code !== 0) {
      const killedBy = signalOf(proc.signalCode, code);
      if (killedBy === undefined) return failed(lastLine(stderr).replace(/^iplookup: /, "") || `exited with ${code}`, code);
      // A child a signal ended (the out-of-memory killer, a kill -9) had no chance to say
      // why: its last line is only the progress it had made ("…: not modified"). Its
      // own error, if it printed one, else the signal.
      const said = lastLine(stderr.split("\n").filter((line) => line.startsWith("iplookup: ") && !line.startsWith("iplookup: warning:")).join("\n"));
      if (said !== "") return failed(said.replace(/^iplookup: /, ""), code);
      return failed(overran ? `still running after ${formatDuration(longest)}: killed by SIGKILL` : `killed by ${killedBy}`, code);
    }
    options.metrics.setDataUpdateSuccess(Math.floor(now().getTime() / 1000));
    let result: { changed?: boolean; data_version?: string; changes?: string[] } = {};
    try {
      result = JSON.parse(lastLine(stdout)) as typeof result;
    } catch {
      // an exit 0 is a success whatever it printed
    }
    if (result.changed) {
      options.logger.log("info", "data updated; the server loads it within a second", {
        data: options.dataPath,
        data_version: result.data_version,
        changes: (result.changes ?? []).map(redactSecrets),
        checksums: checksumLines(stderr).map(redactSecrets),
        seconds,
      });
    } else {
      options.logger.log("info", "data update: no source changed", { data: options.dataPath, seconds });
    }
  };

  const failed = (reason: string, code: number | null) => {
    options.metrics.addDataUpdateFailure();
    options.logger.log("error", "data update failed; still serving the data loaded before", {
      data: options.dataPath,
      error: redactSecrets(reason),
      exit_code: code,
    });
  };

  const firstWait = () => {
    const builtAt = Date.parse(options.dataBuiltAt);
    const dueIn = Number.isNaN(builtAt) ? options.every : builtAt + options.every - now().getTime();
    return jittered(Math.max(dueIn, Math.min(options.every, FIRST_CHECK_AFTER_MS)));
  };
  const first = firstWait();
  options.logger.log("info", "data updates scheduled", {
    data: options.dataPath,
    every: formatDuration(options.every),
    first_check_in_seconds: Math.round(first / 1000),
  });
  schedule(first);

  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      const proc = child;
      if (proc) {
        proc.kill("SIGTERM");
        // A timer cleared once the child has ended: one left to run would keep the
        // server's process alive for the rest of its 5 s after the child has ended.
        let grace: ReturnType<typeof setTimeout> | undefined;
        const ended = await Promise.race([proc.exited.then(() => true), new Promise<false>((resolve) => (grace = setTimeout(() => resolve(false), 5000)))]);
        clearTimeout(grace);
        if (!ended) proc.kill("SIGKILL");
      }
      await running;
    },
  };
}

/** Reads a stream to its end, keeping its last KEEP_OUTPUT bytes. */
async function tail(stream: ReadableStream<Uint8Array>): Promise<string> {
  let kept = new Uint8Array(0);
  for await (const chunk of stream) {
    const joined = new Uint8Array(kept.byteLength + chunk.byteLength);
    joined.set(kept);
    joined.set(chunk, kept.byteLength);
    kept = joined.byteLength > KEEP_OUTPUT ? joined.slice(joined.byteLength - KEEP_OUTPUT) : joined;
  }
  return new TextDecoder().decode(kept);
}

/**
 * What the update said of each download's checksum (`checksum verified: SHA-256 … (from
 * …)`, `no checksum published (…): not verified`), for the server's log: CONTRACT §13
 * asks that the output name the checksum verified, and an operator of a background
 * update reads the log.
 */
function checksumLines(text: string): string[] {
  return text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line.startsWith("checksum verified") || line.startsWith("no checksum published"));
}

/**
 * The signal that ended a child: its own, or the one a code of 128 + N tells (a child
 * run through a shell or a wrapper that passes the signal on as its exit code).
 */
function signalOf(signalCode: string | number | null, code: number | null): string | undefined {
  if (typeof signalCode === "string") return signalCode;
  const number = typeof signalCode === "number" ? signalCode : code !== null && code > 128 && code <= 128 + 64 ? code - 128 : undefined;
  if (number === undefined) return undefined;
  return Object.entries(constants.signals).find(([, value]) => value === number)?.[0] ?? `signal ${number}`;
}

function lastLine(text: string): string {
  return (
    text
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line !== "")
      .pop() ?? ""
  );
}

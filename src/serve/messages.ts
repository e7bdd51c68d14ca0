import type { ServeConfig } from "../config/serve-config.ts";
import type { AsnImage } from "../asn/asn-image.ts";
import type { IndexImage } from "../index/range-index.ts";
import type { MetricsTable } from "../metrics/metrics.ts";
import type { DeliveryState } from "../store/store.ts";
import type { WalCheckpointStats } from "../store/wal-checkpoints.ts";
import type { TlsPair } from "./tls.ts";

/**
 * What the threads of one server share: given to every serving thread at its start.
 * The SharedArrayBuffers in it (the index image, the rate-limit buckets, the metrics,
 * the store's health marks) are shared between the threads, not copied.
 */
export interface ThreadSetup {
  readonly config: ServeConfig;
  /** The port every thread listens on (resolved when the configuration said 0). */
  readonly port: number;
  readonly thread: number;
  readonly image: IndexImage;
  readonly metrics: MetricsTable;
  readonly rateTables: { readonly keys: SharedArrayBuffer; readonly failedKeys: SharedArrayBuffer };
  /** One mark per thread, set while that thread cannot reach the state store (see StoreHealth). */
  readonly storeMarks: Int32Array;
  readonly version: string;
  /** HTTPS: the certificate and key every listener uses; null for plain HTTP. */
  readonly tls: TlsPair | null;
  /** Log lines carry their syslog priority: stderr is systemd's journal (see log/journal.ts). */
  readonly journal: boolean;
}

/** From the main thread to a worker thread. */
export type ToWorker =
  | { readonly type: "start"; readonly setup: ThreadSetup }
  /** Be the thread that checkpoints the SQLite state file at `path` (see wal-checkpoints.ts); say "listening" once it runs. */
  | { readonly type: "checkpoints"; readonly path: string; readonly intervalMs: number }
  /**
   * Be the events thread (see serve/events.ts): deliver webhooks and sweep for key.expiring
   * on a store connection of its own at `statePath`, logging at `logLevel`; say "listening"
   * once it runs.
   */
  | { readonly type: "events"; readonly statePath: string; readonly logLevel: ServeConfig["logLevel"]; readonly journal: boolean }
  /** Be `backup`'s thread: copy the state file at `path` into the file `into` (see vacuum-into.ts); say "copied" once done. */
  | { readonly type: "vacuum-into"; readonly path: string; readonly into: string }
  /** Be a loader (see index-loader.ts): load the data file at `path` with its AS index; say "index-loaded" with its image. */
  | { readonly type: "load-index"; readonly path: string }
  /** Be a loader: build the AS index of `image`; say "asn-built" with it. */
  | { readonly type: "build-asn"; readonly image: IndexImage }
  /** A reloaded data set: answer from it from now on. */
  | { readonly type: "index"; readonly image: IndexImage }
  /** A new certificate: listen with it from now on; connections open finish on the old one. */
  | { readonly type: "tls"; readonly tls: TlsPair }
  /** Stop accepting, finish the requests in flight, commit their units, say "stopped". */
  | { readonly type: "stop" };

/** From a worker thread to the main thread. */
export type FromWorker =
  | { readonly type: "listening" }
  /** Log lines, joined by newlines: the main thread writes every thread's logs. */
  | { readonly type: "log"; readonly text: string }
  /** The thread could not start serving; `code` is the system error's (EADDRINUSE, …). */
  | { readonly type: "failed"; readonly error: string; readonly code?: string }
  /** A checkpoint of the state file failed (said once until one succeeds again). */
  | { readonly type: "checkpoint-failed"; readonly error: string }
  /** What the checkpoint thread has done so far, after each interval's checkpoints; `walBytes` is the -wal file's length then. */
  | { readonly type: "checkpoint-stats"; readonly stats: WalCheckpointStats; readonly walBytes: number }
  /** The events thread made a webhook attempt; `state` is its delivery's state after it. */
  | { readonly type: "webhook-attempt"; readonly state: DeliveryState }
  | { readonly type: "copied" }
  | { readonly type: "index-loaded"; readonly image: IndexImage }
  | { readonly type: "asn-built"; readonly asn: AsnImage }
  | { readonly type: "stopped" };

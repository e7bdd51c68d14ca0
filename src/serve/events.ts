import { Deliverer, POLL_MS } from "../events/deliverer.ts";
import { emitExpiringKeys, expiringView } from "../events/emit.ts";
import type { Logger } from "../log/logger.ts";
import type { DeliveryState } from "../store/store.ts";
import { openStore } from "../store/open-store.ts";

/** How often the keys are looked over for key.expiring, and the outbox pruned. */
export const EXPIRY_SWEEP_MS = 10 * 60_000;
/**
 * How long delivered and failed deliveries (and their events) are kept, for the delivery
 * log. Longer than a billing period and the key.expiring notice together, so that the
 * once-only record of a usage.threshold or key.expiring event outlives the period or the
 * expiry it is about.
 */
export const OUTBOX_KEPT_DAYS = 45;
/** How long a stop waits for the deliveries being recorded and a sweep under way. */
const STOP_GRACE_MS = 300;

export interface ServeEventsOptions {
  /** The --state location: the events get a store connection of their own there. */
  readonly statePath: string;
  readonly logger: Logger;
  readonly now: () => Date;
  /** Hears of each attempt's outcome (for /metrics, counted by the main thread). */
  readonly onAttempt?: (state: DeliveryState) => void;
}

export interface ServeEvents {
  /**
   * Stops the timers and the deliveries under way (see Deliverer.stop), waits a moment
   * for a sweep under way, then closes the store connection, ending what still waits.
   */
  stop(): Promise<void>;
}

/**
 * The webhook side of `serve` (CONTRACT §16): the Deliverer, which sends what the outbox
 * holds once a second, and the key.expiring sweep, every ten minutes. `serve` runs them
 * on a thread of their own, which serves no request (see worker-thread.ts), on timers
 * and a store connection of their own: a lookup never waits for a webhook, and a fan-out
 * of deliveries (signing, sending, recording each attempt) takes no serving thread's
 * time. On SQLite that connection never waits for the write lock (a pass that finds it
 * taken is tried again a second later); every server sharing a PostgreSQL database runs
 * them, and the outbox's leases make each delivery go out once.
 */
export async function startServeEvents(options: ServeEventsOptions): Promise<ServeEvents> {
  // Two connections are plenty for a pass a second (PostgreSQL); SQLite ignores it.
  const store = await openStore(options.statePath, { lockWaitMs: 0, poolSize: 2, walAutoCheckpoint: false });
  const deliverer = new Deliverer({ store, now: () => options.now().getTime(), logger: options.logger, onAttempt: options.onAttempt });
  deliverer.start(POLL_MS);
  let sweeping: Promise<unknown> | undefined;
  let stopped = false;
  const sweep = () => {
    // What failed, in the words of the log line: the step under way when the sweep stopped.
    let step = "key.expiring: the keys could not be read";
    const run = async () => {
      const keys = await store.listKeys();
      step = "key.expiring: the events could not be recorded";
      await emitExpiringKeys(store, keys.map(expiringView), options.now());
      step = "the webhook outbox could not be pruned of its old deliveries";
      await store.webhooks.pruneOutbox(new Date(options.now().getTime() - OUTBOX_KEPT_DAYS * 86_400_000).toISOString());
    };
    sweeping ??= run()
      .catch((error) => {
        // Stopped meanwhile: the store was closed under the sweep, which the next start does again.
        if (!stopped) options.logger.log("warn", `${step}; trying again later`, { error: String((error as Error)?.message ?? error) });
      })
      .finally(() => (sweeping = undefined));
  };
  sweep();
  const timer = setInterval(sweep, EXPIRY_SWEEP_MS);
  timer.unref?.();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      // A sweep is waited for as long as the deliveries being recorded, no longer: one
      // waiting for a database gone silent would hold the stop until TCP gave up. Its
      // writes are each one transaction, and closing the store ends it.
      await Promise.all([deliverer.stop(STOP_GRACE_MS), sweeping && awhile(sweeping, STOP_GRACE_MS)]);
      await store.close();
    },
  };
}

/**
 * Resolves when `work` settles or `ms` have passed, whichever comes first; the timer is
 * cleared then, so that it does not keep a stopped process alive.
 */
function awhile(work: Promise<unknown>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    work.then(done, done);
  });
}

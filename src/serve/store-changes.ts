import type { Generation, Store } from "../store/store.ts";

/**
 * What a thread keeps of the state store in memory (the key cache, the corrections),
 * reloaded when the store's change counter has moved past what it holds, or is another
 * store's.
 */
export interface FollowsStore {
  /** Reloads if the counter, as just read, differs from the one loaded. */
  refresh(generation: Generation): Promise<void>;
}

export interface StoreChangeReports {
  /** Every read of the tick succeeded: the store can be reached. */
  reached(): void;
  /** A read failed: the counter's (`follower` undefined) or the reload of the follower so named. What it held stays. */
  failed(error: unknown, follower: string | undefined): void;
}

/**
 * Polls the store's change counter every `pollMs` for one thread and hands each reading
 * to every follower, so a change made by any process or host (a key revoked with the
 * CLI, a correction set on another server) reaches the thread within `pollMs` plus a
 * read: one read of the counter a tick, however many follow it. A tick while the last
 * one still waits for the store (a database gone silent) starts none; a follower that
 * fails to reload does not keep the others from theirs. The timer never keeps the
 * process alive. Once stopped, a read still under way reports nothing: the store is
 * closed under it when its thread stops.
 */
export function followStoreChanges(
  store: Pick<Store, "generation">,
  followers: Readonly<Record<string, FollowsStore>>,
  pollMs: number,
  reports: StoreChangeReports,
): { stop(): void } {
  let polling = false;
  let stopped = false;
  const tick = async () => {
    let generation: Generation;
    try {
      generation = await store.generation();
    } catch (error) {
      // Stopped meanwhile: the store was closed under the read, which lost nothing.
      if (!stopped) reports.failed(error, undefined);
      return;
    }
    let allReloaded = true;
    for (const [name, follower] of Object.entries(followers)) {
      if (stopped) return;
      try {
        await follower.refresh(generation);
      } catch (error) {
        allReloaded = false;
        if (!stopped) reports.failed(error, name);
      }
    }
    if (allReloaded && !stopped) reports.reached();
  };
  const timer = setInterval(() => {
    if (polling) return;
    polling = true;
    void tick().finally(() => {
      polling = false;
    });
  }, pollMs);
  timer.unref?.();
  return {
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}

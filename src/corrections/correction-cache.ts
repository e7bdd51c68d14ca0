import type { Store } from "../store/store.ts";
import { CorrectionTable } from "./correction-table.ts";

/**
 * The state store's corrections, built into a CorrectionTable, for the lookups of one
 * thread. It learns of changes as the key cache does (access/key-cache.ts): it polls the
 * store's change counter, which every change to a correction moves (the triggers of the
 * corrections table), from any process or host, and reloads the corrections when the
 * counter moved. So a correction made with the CLI, the admin API or the console
 * reaches every thread of every server on the store within `pollMs` plus a read.
 *
 * Invariant: `current()` is null exactly when the store holds no correction, so lookups
 * without corrections pay one check and nothing more.
 */
export class CorrectionCache {
  private timer: ReturnType<typeof setInterval> | undefined;
  private refreshing = false;

  private constructor(
    private readonly store: Store,
    private table: CorrectionTable | null,
    private generation: number,
  ) {}

  static async load(store: Store): Promise<CorrectionCache> {
    const snapshot = await store.correctionSnapshot();
    return new CorrectionCache(store, tableOf(snapshot.corrections), snapshot.generation);
  }

  /** The corrections to lay over lookups now, or null when there are none. */
  current(): CorrectionTable | null {
    return this.table;
  }

  /** Reloads the corrections if the store changed since the last load. */
  async refresh(): Promise<void> {
    if (this.refreshing) return;
    this.refreshing = true;
    try {
      if ((await this.store.generation()) === this.generation) return;
      const snapshot = await this.store.correctionSnapshot();
      this.table = tableOf(snapshot.corrections);
      this.generation = snapshot.generation;
    } finally {
      this.refreshing = false;
    }
  }

  /**
   * Polls the store every `pollMs`; the timer never keeps the process alive. A poll that
   * fails keeps the corrections known and calls `onError`.
   */
  watch(pollMs: number, onError: (error: unknown) => void): void {
    this.stop();
    this.timer = setInterval(() => {
      if (!this.refreshing) this.refresh().catch(onError);
    }, pollMs);
    this.timer.unref?.();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}

function tableOf(corrections: Parameters<typeof CorrectionTable.build>[0]): CorrectionTable | null {
  return corrections.length === 0 ? null : CorrectionTable.build(corrections);
}

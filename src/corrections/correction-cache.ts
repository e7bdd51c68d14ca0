import { sameGeneration, type Generation, type Store } from "../store/store.ts";
import { CorrectionTable } from "./correction-table.ts";

/**
 * The state store's corrections, built into a CorrectionTable, for the lookups of one
 * thread. It learns of changes as the key cache does (access/key-cache.ts), from the
 * same poll of the store's change counter (serve/store-changes.ts), which every change
 * to a correction moves (the triggers of the corrections table), from any process or
 * host, and reloads the corrections when the counter moved. So a correction made with
 * the CLI, the admin API or the console reaches every thread of every server on the
 * store within a poll plus a read.
 *
 * Invariant: `current()` is null exactly when the store holds no correction, so lookups
 * without corrections pay one check and nothing more.
 */
export class CorrectionCache {
  private refreshing = false;

  private constructor(
    private readonly store: Store,
    private table: CorrectionTable | null,
    private generation: Generation,
  ) {}

  static async load(store: Store): Promise<CorrectionCache> {
    const snapshot = await store.correctionSnapshot();
    return new CorrectionCache(store, tableOf(snapshot.corrections), snapshot.generation);
  }

  /** The corrections to lay over lookups now, or null when there are none. */
  current(): CorrectionTable | null {
    return this.table;
  }

  /**
   * Reloads the corrections if the store changed since the last load: since
   * `generation`, the change counter as just read (serve/store-changes.ts polls it), or
   * as read here, moved, or is another store's (a database made again).
   */
  async refresh(generation?: Generation): Promise<void> {
    if (this.refreshing) return;
    this.refreshing = true;
    try {
      if (sameGeneration(generation ?? (await this.store.generation()), this.generation)) return;
      const snapshot = await this.store.correctionSnapshot();
      this.table = tableOf(snapshot.corrections);
      this.generation = snapshot.generation;
    } finally {
      this.refreshing = false;
    }
  }
}

function tableOf(corrections: Parameters<typeof CorrectionTable.build>[0]): CorrectionTable | null {
  return corrections.length === 0 ? null : CorrectionTable.build(corrections);
}

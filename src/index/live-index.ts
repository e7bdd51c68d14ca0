import { statSync } from "node:fs";
import { asnIndexOf } from "../asn/asn-index.ts";
import { RangeIndex } from "./range-index.ts";

/**
 * How a LiveIndex loads a data file and builds an AS index. The CLI and tests do both on
 * the calling thread (`onThisThread`); a server does them on a thread of their own
 * (serve/index-loader.ts), since its main thread serves too: a load of the default data
 * with its AS index takes some 400 ms of CPU, one of the city data over a second, and
 * for that long the main thread answered nothing and read no change of the state store.
 */
export interface IndexLoader {
  /**
   * The data file at `path`, loaded and checked, with its AS index built into its image.
   * `signal` aborts it (a server stopping): it then rejects, and leaves nothing running.
   */
  load(path: string, signal?: AbortSignal): Promise<RangeIndex>;
  /** Builds the AS index of `index` into its image, if it is not built yet; `signal` as for load. */
  buildAsn(index: RangeIndex, signal?: AbortSignal): Promise<void>;
}

export const onThisThread: IndexLoader = {
  async load(path) {
    return openWithAsnIndex(path);
  },
  async buildAsn(index) {
    asnIndexOf(index);
  },
};

/**
 * A load that could not be started for want of something that comes back by itself (a
 * server at its descriptor limit): the file was not judged, and a watching LiveIndex
 * tries it again after RETRY_UNSTARTED_MS.
 */
export class LoaderUnavailableError extends Error {
  override readonly name = "LoaderUnavailableError";
}

/** How long after a load that could not start (LoaderUnavailableError) the watcher tries it again. */
export const RETRY_UNSTARTED_MS = 5000;

type ReloadOutcome = { ok: true; index: RangeIndex } | { ok: false; error: unknown };

/**
 * The index a server answers from, replaced whole on reload: a request holds the index
 * it started with, so it never sees half of one, and a reload that fails leaves the old
 * index serving.
 */
export class LiveIndex {
  private index: RangeIndex;
  private signature: string;
  private timer: ReturnType<typeof setInterval> | undefined;
  /** The reload under way, and the one asked for while it runs (see reload). */
  private running: Promise<boolean> | undefined;
  private queued: Promise<boolean> | undefined;
  /** When the watcher tries again a load that could not start (performance.now()); undefined when none waits. */
  private retryAt: number | undefined;
  private retryUnstartedMs = RETRY_UNSTARTED_MS;
  /** Aborted by stop(): a load under way is cut short, and none starts after it. */
  private readonly stopping = new AbortController();

  constructor(
    private readonly path: string,
    private readonly onReload: (outcome: ReloadOutcome) => void = () => {},
    private readonly loader: IndexLoader = onThisThread,
  ) {
    this.signature = fileSignature(path);
    // The AS index of the first load comes later (buildAsnIndex), so start-up does not wait for
    // it. The first load itself is made here, on this thread: nothing is served before it.
    this.index = RangeIndex.open(path);
  }

  current(): RangeIndex {
    return this.index;
  }

  /**
   * Builds the AS index of the data loaded at start into its image, if it is not built
   * yet; a reload builds its own before it swaps (see reload). A server calls this once it
   * answers, then hands the image to its worker threads again: the build takes a few
   * hundred milliseconds that the first lookups need not wait for. An AS request on the
   * main thread before then builds it on the spot (asnIndexOf).
   */
  async buildAsnIndex(): Promise<void> {
    await this.loader.buildAsn(this.index, this.stopping.signal);
  }

  /**
   * Loads the file again and swaps it in; on failure keeps the old index. Resolves to
   * whether it swapped. One reload runs at a time: one asked for while another runs
   * follows it (the file may have changed since that one read it), and any more asked for
   * meanwhile join that one. After stop, none starts and the one under way is cut short.
   */
  reload(): Promise<boolean> {
    if (this.running === undefined) {
      this.running = this.loadAndSwap().finally(() => (this.running = undefined));
      return this.running;
    }
    return (this.queued ??= this.running.then(() => {
      this.queued = undefined;
      return this.reload();
    }));
  }

  private async loadAndSwap(): Promise<boolean> {
    const { signal } = this.stopping;
    if (signal.aborted) return false;
    // The file as this load reads it; the watcher may see it change again meanwhile
    // (`seen` then differs), and that change is still to be loaded: it is not overwritten.
    const seen = this.signature;
    const signature = fileSignature(this.path);
    const settle = () => {
      if (this.signature === seen) this.signature = signature;
    };
    try {
      const index = await this.loader.load(this.path, signal);
      if (signal.aborted) return false;
      this.index = index;
      settle();
      this.onReload({ ok: true, index });
      return true;
    } catch (error) {
      if (signal.aborted) return false;
      // A file that fails is not tried again by the watcher until it changes again; one
      // whose load could not even start is, a while later, the file unjudged.
      if (error instanceof LoaderUnavailableError) this.retryAt = performance.now() + this.retryUnstartedMs;
      settle();
      this.onReload({ ok: false, error });
      return false;
    }
  }

  /**
   * Reloads when the file is replaced (a rename gives it a new inode), rewritten, or has
   * its mode or owner changed (an unreadable file made readable), checked every
   * `pollMs`. A file that fails to load is tried again only once it changes again, or,
   * when its load could not start (LoaderUnavailableError), `retryUnstartedMs` later.
   */
  watch(pollMs: number, retryUnstartedMs = RETRY_UNSTARTED_MS): void {
    this.clearTimer();
    this.retryUnstartedMs = retryUnstartedMs;
    this.timer = setInterval(() => {
      const signature = fileSignature(this.path);
      const retry = this.retryAt !== undefined && performance.now() >= this.retryAt;
      if ((signature === this.signature && !retry) || signature === "missing") return;
      this.signature = signature;
      this.retryAt = undefined;
      void this.reload();
    }, pollMs);
    this.timer.unref?.();
  }

  /** Stops watching and cuts short a load under way (see IndexLoader); a reload then swaps nothing and reports nothing. */
  stop(): void {
    this.stopping.abort();
    this.clearTimer();
  }

  private clearTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}

/**
 * Loads a data file and builds its AS index with it, into the index's image, so the
 * image handed to worker threads carries both and every thread shares one copy.
 * (Reloads: the old data serves meanwhile, so the swap can wait for both.)
 */
export function openWithAsnIndex(path: string): RangeIndex {
  const index = RangeIndex.open(path);
  asnIndexOf(index);
  return index;
}

function fileSignature(path: string): string {
  try {
    const stat = statSync(path);
    // ctime moves with a change of mode or owner, which may make a file readable.
    return `${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}`;
  } catch {
    return "missing";
  }
}

import { statSync } from "node:fs";
import { asnIndexOf } from "../asn/asn-index.ts";
import { RangeIndex } from "./range-index.ts";

/**
 * The index a server answers from, replaced whole on reload: a request holds the index
 * it started with, so it never sees half of one, and a reload that fails leaves the old
 * index serving.
 */
export class LiveIndex {
  private index: RangeIndex;
  private signature: string;
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly path: string,
    private readonly onReload: (outcome: { ok: true; index: RangeIndex } | { ok: false; error: unknown }) => void = () => {},
  ) {
    this.signature = fileSignature(path);
    // The AS index of the first load comes later (buildAsnIndex), so start-up does not wait for it.
    this.index = RangeIndex.open(path);
  }

  current(): RangeIndex {
    return this.index;
  }

  /**
   * Builds the AS index of the data loaded at start into its image, if it is not built
   * yet; a reload builds its own before it swaps (see reload). A server calls this once it
   * answers, then hands the image to its worker threads again: the build takes a few
   * hundred milliseconds that the first lookups need not wait for. An AS request before
   * then builds it on the spot (asnIndexOf), into the same image on the main thread.
   */
  buildAsnIndex(): void {
    asnIndexOf(this.index);
  }

  /** Loads the file again and swaps it in; on failure keeps the old index. */
  reload(): boolean {
    try {
      const signature = fileSignature(this.path);
      const index = openWithAsnIndex(this.path);
      this.index = index;
      this.signature = signature;
      this.onReload({ ok: true, index });
      return true;
    } catch (error) {
      this.onReload({ ok: false, error });
      return false;
    }
  }

  /**
   * Reloads when the file is replaced (a rename gives it a new inode) or rewritten, checked
   * every `pollMs`. A file that fails to load is tried again only once it changes again.
   */
  watch(pollMs: number): void {
    this.stop();
    this.timer = setInterval(() => {
      const signature = fileSignature(this.path);
      if (signature === this.signature || signature === "missing") return;
      this.signature = signature;
      this.reload();
    }, pollMs);
    this.timer.unref?.();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}

/**
 * Loads a data file and builds its AS index with it, into the index's image, so the
 * image handed to worker threads carries both and every thread shares one copy.
 * (Reloads: the old data serves meanwhile, so the swap can wait for both.)
 */
function openWithAsnIndex(path: string): RangeIndex {
  const index = RangeIndex.open(path);
  asnIndexOf(index);
  return index;
}

function fileSignature(path: string): string {
  try {
    const stat = statSync(path);
    return `${stat.ino}:${stat.size}:${stat.mtimeMs}`;
  } catch {
    return "missing";
  }
}

import { statSync } from "node:fs";
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
    this.index = RangeIndex.open(path);
  }

  current(): RangeIndex {
    return this.index;
  }

  /** Loads the file again and swaps it in; on failure keeps the old index. */
  reload(): boolean {
    try {
      const signature = fileSignature(this.path);
      const index = RangeIndex.open(this.path);
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

function fileSignature(path: string): string {
  try {
    const stat = statSync(path);
    return `${stat.ino}:${stat.size}:${stat.mtimeMs}`;
  } catch {
    return "missing";
  }
}

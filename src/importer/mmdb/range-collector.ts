import { LayerBuilder, type PackedLayer } from "../packed-layer.ts";

/**
 * Turns the leaves of a search tree, given in address order, into packed ranges, merging
 * a leaf into the range before it when the values are equal and nothing (an empty record,
 * a skipped subtree) lay between them. A leaf's network is a 128-bit path of four 32-bit
 * words and a prefix length. Ranges go straight into typed arrays (see packed-layer.ts):
 * a city database has millions of them, which as objects with BigInts took most of an
 * import's memory.
 *
 * An IPv4 collector (`words` 1) is given leaves of prefix length 96 or more, whose first
 * three path words are zero, and keeps the last word.
 */
export class RangeCollector {
  /** Leaves seen, before merging. */
  rows = 0;
  private readonly ranges: LayerBuilder;
  /** The range being emitted: its first and last address, in `words` words. */
  private readonly start: Uint32Array;
  private readonly end: Uint32Array;
  private open = false;
  private adjacent = false;
  private value = -1;
  private start0 = 0;
  private start1 = 0;
  private start2 = 0;
  private start3 = 0;
  private end0 = 0;
  private end1 = 0;
  private end2 = 0;
  private end3 = 0;
  private endLength = 0;

  constructor(readonly words: 1 | 4) {
    this.ranges = new LayerBuilder(words, INITIAL_CAPACITY);
    this.start = new Uint32Array(words);
    this.end = new Uint32Array(words);
  }

  /** Ranges emitted so far. */
  get length(): number {
    return this.ranges.length;
  }

  /** Something that is not a leaf (an empty record, a skipped subtree) came next. */
  gap(): void {
    this.adjacent = false;
  }

  /**
   * A leaf: the network of `length` bits of `path` (bits past `length` are ignored).
   * `startsAt2p32` starts it at 2^32 instead of its first address (an IPv6 leaf holding
   * ::/96, which is not IPv6 data).
   */
  leaf(value: number, path: Uint32Array, length: number, startsAt2p32 = false): void {
    this.rows++;
    if (!(this.open && this.adjacent && value === this.value)) {
      this.finish();
      this.open = true;
      this.value = value;
      if (startsAt2p32) {
        this.start0 = this.start1 = this.start3 = 0;
        this.start2 = 1;
      } else {
        this.start0 = masked(path[0]!, length, 0);
        this.start1 = masked(path[1]!, length, 32);
        this.start2 = masked(path[2]!, length, 64);
        this.start3 = masked(path[3]!, length, 96);
      }
    }
    this.adjacent = true;
    this.end0 = path[0]!;
    this.end1 = path[1]!;
    this.end2 = path[2]!;
    this.end3 = path[3]!;
    this.endLength = length;
  }

  /** Emits the open range; call once after the last leaf. */
  finish(): void {
    if (!this.open) return;
    this.open = false;
    const length = this.endLength;
    const { start, end } = this;
    if (this.words === 1) {
      start[0] = this.start3;
      end[0] = filled(this.end3, length, 96);
    } else {
      start[0] = this.start0;
      start[1] = this.start1;
      start[2] = this.start2;
      start[3] = this.start3;
      end[0] = filled(this.end0, length, 0);
      end[1] = filled(this.end1, length, 32);
      end[2] = filled(this.end2, length, 64);
      end[3] = filled(this.end3, length, 96);
    }
    this.ranges.push(start, 0, end, 0, this.value);
  }

  /** The ranges so far, as views of the builder's arrays (no copy). */
  layer(): PackedLayer {
    return this.ranges.layer();
  }
}

const INITIAL_CAPACITY = 1024;

/** The word at bit `from` of a path, with the bits past `length` cleared. */
function masked(word: number, length: number, from: number): number {
  const kept = length - from;
  if (kept >= 32) return word;
  if (kept <= 0) return 0;
  return (word & (-1 << (32 - kept))) >>> 0;
}

/** The word at bit `from` of a path, with the bits past `length` set. */
function filled(word: number, length: number, from: number): number {
  const kept = length - from;
  if (kept >= 32) return word;
  if (kept <= 0) return 0xffffffff;
  return (word | ~(-1 << (32 - kept))) >>> 0;
}

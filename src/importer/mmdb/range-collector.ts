import type { PackedLayer } from "../packed-layer.ts";

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
  private count = 0;
  private starts: Uint32Array;
  private ends: Uint32Array;
  private values: Int32Array;
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
    this.starts = new Uint32Array(INITIAL_CAPACITY * words);
    this.ends = new Uint32Array(INITIAL_CAPACITY * words);
    this.values = new Int32Array(INITIAL_CAPACITY);
  }

  /** Ranges emitted so far. */
  get length(): number {
    return this.count;
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
    if (this.count === this.values.length) this.grow();
    const length = this.endLength;
    const i = this.count++;
    this.values[i] = this.value;
    if (this.words === 1) {
      this.starts[i] = this.start3;
      this.ends[i] = filled(this.end3, length, 96);
      return;
    }
    const at = i * 4;
    this.starts[at] = this.start0;
    this.starts[at + 1] = this.start1;
    this.starts[at + 2] = this.start2;
    this.starts[at + 3] = this.start3;
    this.ends[at] = filled(this.end0, length, 0);
    this.ends[at + 1] = filled(this.end1, length, 32);
    this.ends[at + 2] = filled(this.end2, length, 64);
    this.ends[at + 3] = filled(this.end3, length, 96);
  }

  /**
   * The ranges so far, as views of the collector's arrays (no copy: at most a third of
   * them is unused room, where a copy would hold both at once).
   */
  layer(): PackedLayer {
    const { words, count } = this;
    return { words, length: count, starts: this.starts.subarray(0, count * words), ends: this.ends.subarray(0, count * words), values: this.values.subarray(0, count) };
  }

  private grow(): void {
    const capacity = Math.ceil(this.values.length * 1.5);
    const starts = new Uint32Array(capacity * this.words);
    const ends = new Uint32Array(capacity * this.words);
    const values = new Int32Array(capacity);
    starts.set(this.starts);
    ends.set(this.ends);
    values.set(this.values);
    this.starts = starts;
    this.ends = ends;
    this.values = values;
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

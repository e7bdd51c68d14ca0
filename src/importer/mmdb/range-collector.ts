import type { ValueRange } from "../ranges.ts";

/**
 * Turns the leaves of a search tree, given in address order, into ranges, merging a leaf
 * into the range before it when the values are equal and nothing (an empty record, a
 * skipped subtree) lay between them. A leaf's network is a 128-bit path of four 32-bit
 * words and a prefix length; BigInts are made only when a range is finished.
 */
export class RangeCollector {
  readonly ranges: ValueRange<number>[] = [];
  /** Leaves seen, before merging. */
  rows = 0;
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
    const end =
      length <= 53
        ? BigInt(highAsNumber(masked(this.end0, length, 0), masked(this.end1, length, 32)) + 2 ** (128 - length)) - 1n
        : toBigInt(filled(this.end0, length, 0), filled(this.end1, length, 32), filled(this.end2, length, 64), filled(this.end3, length, 96));
    this.ranges.push({ start: toBigInt(this.start0, this.start1, this.start2, this.start3), end, value: this.value });
  }
}

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

/**
 * The address of four path words. BigInts are slow to build (this is most of the time
 * spent on a large IPv6 file), so the common cases take one step: an IPv4 address, and
 * an address whose significant bits fit a double (a network of /53 or shorter).
 */
function toBigInt(w0: number, w1: number, w2: number, w3: number): bigint {
  if ((w0 | w1 | w2) === 0) return BigInt(w3);
  if ((w2 | w3) === 0 && (w1 & 0x7ff) === 0) return BigInt(highAsNumber(w0, w1));
  return (BigInt(w0) << 96n) | (BigInt(w1) << 64n) | (BigInt(w2) << 32n) | BigInt(w3);
}

/** w0·2^96 + w1·2^64 as a double: exact when w1's low 11 bits are zero. */
function highAsNumber(w0: number, w1: number): number {
  return (w0 * 2 ** 32 + w1) * 2 ** 64;
}

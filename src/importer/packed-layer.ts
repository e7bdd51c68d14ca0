import { readAddress, writeAddress } from "../data-file/packed-address.ts";
import type { Family, ValueRange } from "./ranges.ts";

/**
 * One source's ranges of one family in typed arrays: range i is `starts`/`ends` words
 * i·words … i·words+words-1 (most significant first; 1 word for IPv4, 4 for IPv6) and
 * `values[i]`. About 36 bytes a range for IPv6 where ValueRange objects with their
 * BigInts take well over 100: an import holds millions of ranges at once.
 */
export interface PackedLayer {
  readonly words: 1 | 4;
  readonly length: number;
  readonly starts: Uint32Array;
  readonly ends: Uint32Array;
  readonly values: Int32Array;
}

export function wordsOf(family: Family): 1 | 4 {
  return family === 4 ? 1 : 4;
}

/** Packs disjoint ranges sorted by start. */
export function packLayer(family: Family, ranges: readonly ValueRange<number>[]): PackedLayer {
  const words = wordsOf(family);
  const starts = new Uint32Array(ranges.length * words);
  const ends = new Uint32Array(ranges.length * words);
  const values = new Int32Array(ranges.length);
  ranges.forEach((range, i) => {
    writeAddress(range.start, words, starts, i * words);
    writeAddress(range.end, words, ends, i * words);
    values[i] = range.value;
  });
  return { words, length: ranges.length, starts, ends, values };
}

/** The layer's ranges as ValueRange objects: the form tests and small tools read. */
export function unpackLayer(layer: PackedLayer): ValueRange<number>[] {
  const { words } = layer;
  return Array.from(layer.values, (value, i) => ({ start: readAddress(layer.starts, words, i * words), end: readAddress(layer.ends, words, i * words), value }));
}

/** Compares the addresses at `a`[i…] and `b`[j…]: negative, zero or positive. */
export function compareAddresses(a: Uint32Array, i: number, b: Uint32Array, j: number, words: number): number {
  for (let w = 0; w < words; w++) {
    const x = a[i + w] as number;
    const y = b[j + w] as number;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

/** Writes the address at `from`[at…] + 1 into `into`; false when it is the family's last address. */
export function nextAddress(from: Uint32Array, at: number, into: Uint32Array, words: number): boolean {
  let carry = true;
  for (let w = words - 1; w >= 0; w--) {
    const word = from[at + w] as number;
    if (carry) {
      into[w] = word === 0xffffffff ? 0 : word + 1;
      carry = word === 0xffffffff;
    } else {
      into[w] = word;
    }
  }
  return !carry;
}

const NEXT = new Uint32Array(4);

/** Whether the address at `b`[j…] is the one right after the address at `a`[i…]. */
export function followsDirectly(a: Uint32Array, i: number, b: Uint32Array, j: number, words: 1 | 4): boolean {
  return nextAddress(a, i, NEXT, words) && compareAddresses(NEXT, 0, b, j, words) === 0;
}

/**
 * A PackedLayer being filled, range by range, in arrays that grow by half when full (a
 * reader does not know beforehand how many ranges a file holds).
 */
export class LayerBuilder {
  private count = 0;
  private starts: Uint32Array;
  private ends: Uint32Array;
  private values: Int32Array;

  constructor(
    readonly words: 1 | 4,
    capacity = 1024,
  ) {
    capacity = Math.max(16, capacity);
    this.starts = new Uint32Array(capacity * words);
    this.ends = new Uint32Array(capacity * words);
    this.values = new Int32Array(capacity);
  }

  get length(): number {
    return this.count;
  }

  /** Adds the range from the address at `starts`[s…] to the one at `ends`[e…] with `value`. */
  push(starts: Uint32Array, s: number, ends: Uint32Array, e: number, value: number): void {
    if (this.count === this.values.length) this.grow();
    const words = this.words;
    const at = this.count * words;
    for (let w = 0; w < words; w++) {
      this.starts[at + w] = starts[s + w] as number;
      this.ends[at + w] = ends[e + w] as number;
    }
    this.values[this.count++] = value;
  }

  /** Whether the last range runs from the address at `starts`[0…] to the one at `ends`[0…]. */
  lastIs(starts: Uint32Array, ends: Uint32Array): boolean {
    if (this.count === 0) return false;
    const at = (this.count - 1) * this.words;
    for (let w = 0; w < this.words; w++) {
      if (this.starts[at + w] !== starts[w] || this.ends[at + w] !== ends[w]) return false;
    }
    return true;
  }

  /** Gives the last range `value`. */
  setLastValue(value: number): void {
    this.values[this.count - 1] = value;
  }

  /** Moves the end of the last range to the address at `ends`[e…]. */
  extendLast(ends: Uint32Array, e: number): void {
    const at = (this.count - 1) * this.words;
    for (let w = 0; w < this.words; w++) this.ends[at + w] = ends[e + w] as number;
  }

  /** The ranges so far, as views of the builder's arrays (no copy). */
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

/** Rows `from` … `to`-1 of a layer, as views (no copy). */
export function sliceLayer(layer: PackedLayer, from: number, to: number): PackedLayer {
  const { words } = layer;
  return { words, length: to - from, starts: layer.starts.subarray(from * words, to * words), ends: layer.ends.subarray(from * words, to * words), values: layer.values.subarray(from, to) };
}

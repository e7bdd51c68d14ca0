import type { FieldValue } from "../index/record-fields.ts";

/**
 * Finds a record already made that equals a new one, by a hash of the record's content:
 * open addressing over the records' positions, the table at least twice their count.
 * It holds no copy of a record (about 12 bytes a record, where a map keyed by records'
 * text would hold over 100: a city import makes over a million records).
 */
export class RecordIds {
  /** Per slot, a record's position + 1; 0 for an empty slot. */
  private slots = new Int32Array(1 << 12);
  /** Per record position, its hash. */
  private hashes = new Int32Array(1 << 11);
  private count = 0;

  /** The position of a record with hash `hash` that `equals` accepts, or -1. */
  find(hash: number, equals: (position: number) => boolean): number {
    const mask = this.slots.length - 1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const held = this.slots[slot] as number;
      if (held === 0) return -1;
      if (this.hashes[held - 1] === hash && equals(held - 1)) return held - 1;
    }
  }

  /** Adds the next record position (0, 1, …) with hash `hash`; returns it. */
  add(hash: number): number {
    if (this.count === this.hashes.length) {
      const hashes = new Int32Array(this.hashes.length * 2);
      hashes.set(this.hashes);
      this.hashes = hashes;
    }
    if (2 * (this.count + 1) > this.slots.length) this.rehash(this.slots.length * 2);
    const position = this.count++;
    this.hashes[position] = hash;
    this.place(position);
    return position;
  }

  private place(position: number): void {
    const mask = this.slots.length - 1;
    let slot = (this.hashes[position] as number) & mask;
    while (this.slots[slot] !== 0) slot = (slot + 1) & mask;
    this.slots[slot] = position + 1;
  }

  private rehash(size: number): void {
    this.slots = new Int32Array(size);
    for (let position = 0; position < this.count; position++) this.place(position);
  }
}

const NUMBER = new Float64Array(1);
const NUMBER_WORDS = new Uint32Array(NUMBER.buffer);

/** Mixes `value` (text, a number, or null) into `hash` (32 bits, FNV-1a style). */
export function hashValue(hash: number, value: FieldValue | undefined): number {
  if (typeof value === "string") {
    hash = Math.imul(hash ^ 0x73, 0x01000193); // a tag, so that "1" and 1 differ
    for (let i = 0; i < value.length; i++) hash = Math.imul(hash ^ value.charCodeAt(i), 0x01000193);
    return Math.imul(hash ^ 0xff, 0x01000193); // the end, so that ["ab", ""] and ["a", "b"] differ
  }
  if (typeof value === "number") {
    NUMBER[0] = value + 0; // -0 as 0, as === has it
    hash = Math.imul(hash ^ 0x6e, 0x01000193);
    hash = Math.imul(hash ^ (NUMBER_WORDS[0] as number), 0x01000193);
    return Math.imul(hash ^ (NUMBER_WORDS[1] as number), 0x01000193);
  }
  return Math.imul(hash ^ 0x30, 0x01000193);
}

/** The hash to start from. */
export const HASH_SEED = 0x811c9dc5 | 0;

/** The hash made final: its bits mixed (MurmurHash3's finaliser), since the table reads the low ones. */
export function finishHash(hash: number): number {
  hash = Math.imul(hash ^ (hash >>> 16), 0x85ebca6b);
  hash = Math.imul(hash ^ (hash >>> 13), 0xc2b2ae35);
  return hash ^ (hash >>> 16);
}

import { UnpackError } from "./unpack-error.ts";

/**
 * How far compressed input may expand (CONTRACT §13). Real data sets expand 3–20 times
 * (DB-IP's city CSV about 5, an MMDB about 3); a decompression bomb (a gzip of zeros,
 * or of one CSV line repeated) expands a thousand times from its first bytes. So:
 *
 * - each compressed stream's output stays under EXPANSION_RATIO times the compressed
 *   bytes read so far, plus EXPANSION_SLACK (so a small file of few bytes is not judged
 *   by its ratio alone);
 * - everything one import unpacks stays under `--max-expanded` (DEFAULT_MAX_EXPANDED).
 *
 * Both are checked as each decompressed chunk arrives, before it is written: a bomb
 * stops within one chunk (16 KiB of gzip output, or what 16 KiB of a zip's input gives)
 * of its bound, with nothing of it kept.
 */
export const EXPANSION_RATIO = 100;
export const EXPANSION_SLACK = 64 * 2 ** 20;
export const DEFAULT_MAX_EXPANDED = 2 * 2 ** 30;
/** Compressed input is fed to a decompressor at most this many bytes at a time. */
export const COMPRESSED_SLICE = 16 * 1024;

/** The budget of one import or update: what all its sources may unpack together. */
export class ExpansionBudget {
  private total = 0;

  constructor(readonly maxExpanded: number = DEFAULT_MAX_EXPANDED) {}

  /** The bytes unpacked so far by every stream of this budget. */
  get expanded(): number {
    return this.total;
  }

  /** A meter for one compressed stream. */
  stream(): ExpansionMeter {
    return new ExpansionMeter(this);
  }

  /** Counts `bytes` more unpacked; throws past --max-expanded. */
  add(bytes: number): void {
    this.total += bytes;
    if (this.total > this.maxExpanded) {
      throw new UnpackError(`it unpacks to more than --max-expanded ${sizeText(this.maxExpanded)}: stopped (raise --max-expanded if the data set is really that large)`);
    }
  }
}

/** One compressed stream's ratio: the compressed bytes read and what they expanded to. */
export class ExpansionMeter {
  private compressed = 0;
  private expanded = 0;

  constructor(private readonly budget: ExpansionBudget) {}

  /** `bytes` of compressed input taken by the decompressor. */
  read(bytes: number): void {
    this.compressed += bytes;
  }

  /** `bytes` of output; throws when past either bound. */
  expand(bytes: number): void {
    this.expanded += bytes;
    if (this.expanded > EXPANSION_RATIO * this.compressed + EXPANSION_SLACK) {
      throw new UnpackError(
        `it expands to more than ${EXPANSION_RATIO} times the ${sizeText(this.compressed)} of compressed input read plus ${sizeText(EXPANSION_SLACK)} (a decompression bomb?): stopped`,
      );
    }
    this.budget.add(bytes);
  }
}

/** A size for messages: whole GiB, MiB or KiB where exact, else bytes. */
export function sizeText(bytes: number): string {
  for (const [unit, size] of [["GiB", 2 ** 30], ["MiB", 2 ** 20], ["KiB", 1024]] as const) {
    if (bytes >= size && bytes % size === 0) return `${bytes / size} ${unit}`;
    if (bytes >= size) return `${(bytes / size).toFixed(1)} ${unit}`;
  }
  return `${bytes} bytes`;
}

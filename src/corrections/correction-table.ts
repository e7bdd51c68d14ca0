import type { Address } from "../address/address.ts";
import { lastStartAtOrBelow128, lastStartAtOrBelow32, segmentPrefix128, segmentPrefix32 } from "../address/sorted-search.ts";
import { readAddress } from "../data-file/packed-address.ts";
import { parseCorrectionBlock, wordsOf, type CorrectionBlock } from "./correction-rules.ts";
import type { Correction, CorrectionFields, CorrectionPrivacy, LayeredFields } from "./correction.ts";

/** Where an address lies among the corrections: what applies there, and how far that holds. */
export interface CorrectionHit {
  /** The fields corrected at the address (see LayeredFields); null when none covers it. */
  readonly fields: LayeredFields | null;
  /**
   * The shortest prefix a block around the address may have without crossing a
   * correction's edge: an answer's network is narrowed to at least this prefix.
   */
  readonly minPrefix: number;
}

/**
 * Every correction, flattened per family into disjoint segments by the edges of their
 * blocks: each segment starts at a block's first address or just after a block's last
 * one, and carries the fields that hold throughout it (the nested blocks' fields merged,
 * the more specific one winning per field; their `privacy` objects kept in order, to be
 * laid over one after another: see LayeredFields). A lookup
 * finds its segment by binary search over the sorted starts, as the range index does;
 * the first segment of each family starts at 0, so there always is one.
 *
 * Blocks either nest or are disjoint (they are CIDR blocks), so the blocks covering a
 * segment form a chain from the least to the most specific. Immutable once built.
 */
export class CorrectionTable {
  private constructor(
    private readonly v4Starts: Uint32Array,
    private readonly v4Fields: readonly (LayeredFields | null)[],
    private readonly v6Starts: Uint32Array,
    private readonly v6Fields: readonly (LayeredFields | null)[],
    /** How many corrections were built in. */
    readonly size: number,
    /**
     * The blocks and fields built in, as text: two tables of equal content answer alike.
     * A server rebuilds its table whenever the store's change counter moves, which keys
     * and plans move too; what is derived from a table (the corrected AS answers) is kept
     * by content, so it lasts until the corrections themselves change.
     */
    readonly content: string,
  ) {}

  static build(corrections: readonly Correction[]): CorrectionTable {
    const blocks = corrections.map((correction) => ({ block: parseCorrectionBlock(correction.cidr), fields: correction.fields }));
    const v4 = flatten(blocks.filter(({ block }) => block.version === 4), 32);
    const v6 = flatten(blocks.filter(({ block }) => block.version === 6), 128);
    return new CorrectionTable(
      Uint32Array.from(v4.starts.map(Number)),
      v4.fields,
      Uint32Array.from(v6.starts.flatMap(wordsOf)),
      v6.fields,
      corrections.length,
      JSON.stringify(corrections.map((correction) => [correction.cidr, correction.fields])),
    );
  }

  /** What the corrections say at an address. */
  at(address: Address): CorrectionHit {
    if (address.version === 4) {
      const starts = this.v4Starts;
      const value = address.value;
      const i = lastStartAtOrBelow32(starts, value);
      return { fields: this.v4Fields[i] ?? null, minPrefix: segmentPrefix32(starts, i, value) };
    }
    const starts = this.v6Starts;
    const words = address.words;
    const i = lastStartAtOrBelow128(starts, words);
    return { fields: this.v6Fields[i] ?? null, minPrefix: segmentPrefix128(starts, i, words) };
  }

  /** Calls `visit(first, last, fields)` for each segment of a family that a correction covers, in address order. */
  forEachCorrected(family: 4 | 6, visit: (first: bigint, last: bigint, fields: LayeredFields) => void): void {
    const words: 1 | 4 = family === 4 ? 1 : 4;
    const starts = family === 4 ? this.v4Starts : this.v6Starts;
    const fields = family === 4 ? this.v4Fields : this.v6Fields;
    const end = 1n << BigInt(32 * words);
    for (let i = 0; i < fields.length; i++) {
      const corrected = fields[i];
      if (corrected === null || corrected === undefined) continue;
      const next = i + 1 < fields.length ? readAddress(starts, words, (i + 1) * words) : end;
      visit(readAddress(starts, words, i * words), next - 1n, corrected);
    }
  }
}

interface Placed {
  readonly block: CorrectionBlock;
  readonly fields: CorrectionFields;
}

/**
 * One family's segments: sorted starts (the first 0) and the merged fields of each. A
 * sweep over the edges with the chain of blocks covering the current segment.
 */
function flatten(placed: readonly Placed[], bits: number): { starts: bigint[]; fields: (LayeredFields | null)[] } {
  const end = 1n << BigInt(bits);
  const edges = new Set<bigint>([0n]);
  for (const { block } of placed) {
    edges.add(block.first);
    if (block.last + 1n < end) edges.add(block.last + 1n);
  }
  const starts = [...edges].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  // Outer blocks first: by first address, then by prefix (a shorter prefix is the larger block).
  const queue = [...placed].sort((a, b) => (a.block.first < b.block.first ? -1 : a.block.first > b.block.first ? 1 : a.block.prefix - b.block.prefix));
  const chain: Placed[] = [];
  const fields: (LayeredFields | null)[] = [];
  let next = 0;
  for (const start of starts) {
    while (chain.length > 0 && (chain[chain.length - 1] as Placed).block.last < start) chain.pop();
    while (next < queue.length && (queue[next] as Placed).block.first === start) chain.push(queue[next++] as Placed);
    fields.push(chain.length === 0 ? null : merge(chain));
  }
  return { starts, fields };
}

/** The fields of a chain of nested blocks, outermost first: each field from the innermost block naming it, and every block's `privacy` in the chain's order. */
function merge(chain: readonly Placed[]): LayeredFields {
  const merged: Record<string, unknown> = {};
  const privacy: CorrectionPrivacy[] = [];
  for (const { fields } of chain) {
    for (const [field, value] of Object.entries(fields)) {
      if (field === "privacy") privacy.push(value as CorrectionPrivacy);
      else merged[field] = value;
    }
  }
  if (privacy.length > 0) merged.privacy = privacy;
  return merged as LayeredFields;
}

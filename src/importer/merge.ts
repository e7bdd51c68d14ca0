import { readAddress } from "../data-file/packed-address.ts";
import { compareAddresses, nextAddress, packLayer, wordsOf, type PackedLayer } from "./packed-layer.ts";
import type { Family, ValueRange } from "./ranges.ts";

/** What the layers say about one piece of the address space: a value index per layer, -1 for nothing. */
export type LayerValues = Int32Array;

/**
 * One family's answer table, packed: segment i starts at `starts` words i·words …
 * (most significant first) and runs to the next segment's start - 1 (the last to the
 * family's last address); `records[i]` is its record id, 0 for not found. Segments
 * partition the whole space, and no two neighbours have the same record: every segment
 * is a maximal run of equal answers, which is what `network` relies on.
 */
export interface PackedSegments {
  readonly words: 1 | 4;
  readonly count: number;
  readonly starts: Uint32Array;
  readonly records: Uint32Array;
}

/**
 * Merges packed layers (each disjoint and sorted; values are indexes ≥ 0) into one
 * segment table. `recordOf` maps the layers' values at a piece to a record id (0 when
 * no layer has anything there); equal values must map to equal ids. It may keep nothing
 * of the array it is given, which is reused.
 *
 * A sweep over the layers' boundaries: at each position, every layer's range there (if
 * any) gives a value, and the next position is the nearest range end + 1 or range start
 * after it. Addresses are compared as words, so nothing is allocated per piece.
 */
export function mergePacked(family: Family, layers: readonly PackedLayer[], recordOf: (values: LayerValues) => number): PackedSegments {
  const W = wordsOf(family);
  const values = new Int32Array(layers.length);
  const cursors = new Int32Array(layers.length);
  const position = new Uint32Array(W); // starts at address 0
  const next = new Uint32Array(W);
  const candidate = new Uint32Array(W);
  // Usually about one segment a range; grown by half when more are needed.
  let capacity = Math.max(16, 1 + layers.reduce((sum, layer) => sum + layer.length, 0));
  let starts = new Uint32Array(capacity * W);
  let records = new Uint32Array(capacity);
  let count = 0;
  for (;;) {
    let nextIsEnd = true; // no boundary after position: the last piece reaches the family's end
    for (let l = 0; l < layers.length; l++) {
      const layer = layers[l] as PackedLayer;
      let cursor = cursors[l] as number;
      while (cursor < layer.length && compareAddresses(layer.ends, cursor * W, position, 0, W) < 0) cursor++;
      cursors[l] = cursor;
      if (cursor >= layer.length) {
        values[l] = -1;
        continue;
      }
      if (compareAddresses(layer.starts, cursor * W, position, 0, W) <= 0) {
        values[l] = layer.values[cursor] as number;
        // The piece ends with this range: the next boundary is its end + 1, if any.
        if (!nextAddress(layer.ends, cursor * W, candidate, W)) continue;
      } else {
        values[l] = -1;
        candidate.set(layer.starts.subarray(cursor * W, cursor * W + W));
      }
      if (nextIsEnd || compareAddresses(candidate, 0, next, 0, W) < 0) {
        next.set(candidate);
        nextIsEnd = false;
      }
    }
    const record = recordOf(values);
    if (count === 0 || records[count - 1] !== record) {
      if (count === capacity) {
        capacity = Math.ceil(capacity * 1.5);
        starts = grow(starts, capacity * W);
        records = grow(records, capacity);
      }
      starts.set(position, count * W);
      records[count++] = record;
    }
    if (nextIsEnd) break;
    position.set(next);
  }
  return { words: W, count, starts: starts.subarray(0, count * W), records: records.subarray(0, count) };
}

/**
 * The same merge over ValueRange layers, with the table's starts as BigInts: the form
 * the merge rules are easiest to read and test in.
 */
export function mergeLayers(
  family: Family,
  layers: ReadonlyArray<readonly ValueRange<number>[]>,
  recordOf: (values: LayerValues) => number,
): { starts: bigint[]; records: number[] } {
  const table = mergePacked(
    family,
    layers.map((ranges) => packLayer(family, ranges)),
    recordOf,
  );
  const starts: bigint[] = [];
  for (let i = 0; i < table.count; i++) starts.push(readAddress(table.starts, table.words, i * table.words));
  return { starts, records: Array.from(table.records) };
}

function grow<T extends Uint32Array>(array: T, length: number): T {
  const grown = new Uint32Array(length);
  grown.set(array);
  return grown as T;
}

import { maxAddress, type Family, type ValueRange } from "./ranges.ts";

/** What the layers say about one piece of the address space: a value index per layer, -1 for nothing. */
export type LayerValues = Int32Array;

/**
 * One family's answer table: `starts[i]` … `starts[i+1]-1` is segment i (the last ends
 * at the family's last address), and `records[i]` is its record id, 0 for not found.
 * Segments partition the whole space, and no two neighbours have the same record:
 * every segment is a maximal run of equal answers, which is what `network` relies on.
 */
export interface SegmentTable {
  readonly starts: bigint[];
  readonly records: number[];
}

/**
 * Merges flattened layers (each disjoint and sorted; values are indexes ≥ 0) into one
 * segment table. `recordOf` maps the layers' values at a piece to a record id (0 when no
 * layer has anything there); equal values must map to equal ids. It may keep nothing of
 * the array it is given, which is reused.
 */
export function mergeLayers(family: Family, layers: ReadonlyArray<readonly ValueRange<number>[]>, recordOf: (values: LayerValues) => number): SegmentTable {
  const max = maxAddress(family);
  const cursors = new Array<number>(layers.length).fill(0);
  const values = new Int32Array(layers.length);
  const starts: bigint[] = [];
  const records: number[] = [];
  let position = 0n;
  while (position <= max) {
    let next = max + 1n;
    for (let layer = 0; layer < layers.length; layer++) {
      const ranges = layers[layer] as readonly ValueRange<number>[];
      let cursor = cursors[layer] as number;
      while (cursor < ranges.length && (ranges[cursor] as ValueRange<number>).end < position) cursor++;
      cursors[layer] = cursor;
      const range = ranges[cursor];
      if (range && range.start <= position) {
        values[layer] = range.value;
        if (range.end + 1n < next) next = range.end + 1n;
      } else {
        values[layer] = -1;
        if (range && range.start < next) next = range.start;
      }
    }
    const record = recordOf(values);
    if (records.length === 0 || records[records.length - 1] !== record) {
      starts.push(position);
      records.push(record);
    }
    position = next;
  }
  return { starts, records };
}

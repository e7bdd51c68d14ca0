import { maxAddress, type Family, type ValueRange } from "./ranges.ts";

/** What the layers say about one piece of the address space; undefined: nothing. */
export type LayerValues = ReadonlyArray<string | undefined>;

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
 * Merges flattened layers (each disjoint and sorted, values compared with ===) into one
 * segment table. `recordOf` maps the layers' values at a piece to a record id (0 when no
 * layer has anything there); equal values must map to equal ids.
 */
export function mergeLayers(
  family: Family,
  layers: ReadonlyArray<readonly ValueRange<string>[]>,
  recordOf: (values: LayerValues) => number,
): SegmentTable {
  const max = maxAddress(family);
  const cursors = layers.map(() => 0);
  const starts: bigint[] = [];
  const records: number[] = [];
  let position = 0n;
  while (position <= max) {
    let next = max + 1n;
    const values: Array<string | undefined> = [];
    layers.forEach((ranges, layer) => {
      let cursor = cursors[layer] as number;
      while (cursor < ranges.length && (ranges[cursor] as ValueRange<string>).end < position) cursor++;
      cursors[layer] = cursor;
      const range = ranges[cursor];
      if (range && range.start <= position) {
        values.push(range.value);
        if (range.end + 1n < next) next = range.end + 1n;
      } else {
        values.push(undefined);
        if (range && range.start < next) next = range.start;
      }
    });
    const record = recordOf(values);
    if (records.length === 0 || records[records.length - 1] !== record) {
      starts.push(position);
      records.push(record);
    }
    position = next;
  }
  return { starts, records };
}

import { writeAddress } from "../data-file/packed-address.ts";
import type { SourceInfo } from "../index/network-record.ts";
import { RangeIndex } from "../index/range-index.ts";
import type { FieldValues, RecordField } from "../index/record-fields.ts";
import { isDerivedField } from "./combine.ts";
import type { PackedPart } from "./join-parts.ts";
import { LayerBuilder, wordsOf, type PackedLayer } from "./packed-layer.ts";

/**
 * An iplookup data file read back as one source, so new data can be put in front of
 * it (`data import --with-default`): its segments become packed ranges, its records the
 * values (names derived from codes are left out: the new data set derives them again).
 * Its own sources come along, to be listed, with their licences, after the new ones.
 */
export function readDataFile(path: string): { part: PackedPart; sources: readonly SourceInfo[] } {
  const index = RangeIndex.open(path);
  const fields = index.info.fields.filter((field) => !isDerivedField(field)) as RecordField[];
  const values: FieldValues[] = [];
  for (let id = 1; id <= index.info.records; id++) {
    const record = index.record(id);
    const value: FieldValues = {};
    for (const field of fields) value[field] = record[field] ?? null;
    values.push(value);
  }
  const layer = (family: 4 | 6): PackedLayer => {
    const words = wordsOf(family);
    const ranges = new LayerBuilder(words, family === 4 ? index.info.segmentsV4 : index.info.segmentsV6);
    const start = new Uint32Array(words);
    const end = new Uint32Array(words);
    for (const [first, last, id] of index.segments(family)) {
      if (id === 0) continue;
      writeAddress(first, words, start, 0);
      writeAddress(last, words, end, 0);
      ranges.push(start, 0, end, 0, id - 1);
    }
    return ranges.layer();
  };
  const v4 = layer(4);
  const v6 = layer(6);
  return { part: { fields, values, rows: { 4: v4.length, 6: v6.length }, 4: v4, 6: v6 }, sources: index.info.sources };
}

import type { SourceInfo } from "../index/network-record.ts";
import { RangeIndex } from "../index/range-index.ts";
import type { FieldValues, RecordField } from "../index/record-fields.ts";
import { isDerivedField } from "./combine.ts";
import type { ValueRange } from "./ranges.ts";
import type { SourceData } from "./source-data.ts";

/**
 * An iplookup data file read back as one source, so new data can be put in front of
 * it (`data import --with-default`): its segments become ranges, its records the
 * values (names derived from codes are left out: the new data set derives them again).
 * Its own sources come along, to be listed, with their licences, after the new ones.
 */
export function readDataFile(path: string): { data: SourceData; sources: readonly SourceInfo[] } {
  const index = RangeIndex.open(path);
  const fields = index.info.fields.filter((field) => !isDerivedField(field)) as RecordField[];
  const values: FieldValues[] = [];
  for (let id = 1; id <= index.info.records; id++) {
    const record = index.record(id);
    const value: FieldValues = {};
    for (const field of fields) value[field] = record[field] ?? null;
    values.push(value);
  }
  const layer = (family: 4 | 6) => {
    const ranges: ValueRange<number>[] = [];
    for (const [start, end, id] of index.segments(family)) if (id !== 0) ranges.push({ start, end, value: id - 1 });
    return { rows: ranges.length, ranges };
  };
  return { data: { fields, values, v4: layer(4), v6: layer(6) }, sources: index.info.sources };
}

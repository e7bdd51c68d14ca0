import type { FieldValues, RecordField } from "../../index/record-fields.ts";
import type { ValueRange } from "../ranges.ts";
import { ValueTable } from "../source-data.ts";

/**
 * Records of one MMDB file need not all carry every key (a City database has networks
 * known only to the country). Once the file's fields are known, gives every value all of
 * them, null where it had nothing, and re-interns: values that become equal share one
 * index, and ranges that touch and now have equal values are merged. Returns the inputs
 * as they are when every value already has every field.
 */
export function completeValues(
  fields: readonly RecordField[],
  values: readonly FieldValues[],
  layers: ReadonlyArray<ValueRange<number>[]>,
): { values: readonly FieldValues[]; layers: ValueRange<number>[][] } {
  if (values.every((value) => fields.every((field) => field in value))) return { values, layers: [...layers] };
  const table = new ValueTable();
  const newId = values.map((value) => {
    const complete: FieldValues = {};
    for (const field of fields) complete[field] = value[field] ?? null;
    return table.intern(complete);
  });
  const merged = layers.map((ranges) => {
    const result: ValueRange<number>[] = [];
    for (const range of ranges) {
      const value = newId[range.value]!;
      const last = result[result.length - 1];
      if (last && last.value === value && last.end + 1n === range.start) {
        result[result.length - 1] = { start: last.start, end: range.end, value };
      } else {
        result.push({ start: range.start, end: range.end, value });
      }
    }
    return result;
  });
  return { values: table.values, layers: merged };
}

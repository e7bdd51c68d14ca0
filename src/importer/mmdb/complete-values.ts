import type { FieldValues, RecordField } from "../../index/record-fields.ts";
import { followsDirectly, type PackedLayer } from "../packed-layer.ts";
import { ValueTable } from "../source-data.ts";

/**
 * Records of one MMDB file need not all carry every key (a City database has networks
 * known only to the country). Once the file's fields are known, gives every value all of
 * them, null where it had nothing, and re-interns: values that become equal share one
 * index, and ranges that touch and now have equal values are merged. The layers are
 * rewritten in place (merging only shortens them) and returned with their new lengths;
 * when every value already has every field, everything is returned as it is.
 */
export function completeValues(
  fields: readonly RecordField[],
  values: readonly FieldValues[],
  layers: readonly PackedLayer[],
): { values: readonly FieldValues[]; layers: PackedLayer[] } {
  if (values.every((value) => fields.every((field) => field in value))) return { values, layers: [...layers] };
  const table = new ValueTable();
  const newId = values.map((value) => {
    const complete: FieldValues = {};
    for (const field of fields) complete[field] = value[field] ?? null;
    return table.intern(complete);
  });
  return { values: table.values, layers: layers.map((layer) => remapInPlace(layer, newId)) };
}

function remapInPlace(layer: PackedLayer, newId: readonly number[]): PackedLayer {
  const { words, starts, ends, values } = layer;
  let kept = 0;
  for (let i = 0; i < layer.length; i++) {
    const value = newId[values[i] as number] as number;
    const last = kept - 1;
    if (kept > 0 && values[last] === value && followsDirectly(ends, last * words, starts, i * words, words)) {
      ends.copyWithin(last * words, i * words, i * words + words);
      continue;
    }
    starts.copyWithin(kept * words, i * words, i * words + words);
    ends.copyWithin(kept * words, i * words, i * words + words);
    values[kept++] = value;
  }
  return { words, length: kept, starts: starts.subarray(0, kept * words), ends: ends.subarray(0, kept * words), values: values.subarray(0, kept) };
}

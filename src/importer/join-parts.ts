import { inFieldOrder, type FieldValues, type RecordField } from "../index/record-fields.ts";
import { flattenPackedInClusters } from "./flatten.ts";
import { LayerBuilder, packLayer, unpackLayer, wordsOf, type PackedLayer } from "./packed-layer.ts";
import type { Family } from "./ranges.ts";
import { ValueTable, type SourceData } from "./source-data.ts";

/** One file of a source, read and packed at once so its range objects can go. */
export interface PackedPart {
  readonly fields: readonly RecordField[];
  readonly values: readonly FieldValues[];
  readonly rows: Readonly<Record<Family, number>>;
  readonly 4: PackedLayer;
  readonly 6: PackedLayer;
  readonly described?: SourceData["described"];
}

export function packPart(data: SourceData): PackedPart {
  return {
    fields: data.fields,
    values: data.values,
    rows: { 4: data.v4.rows, 6: data.v6.rows },
    4: packLayer(4, data.v4.ranges),
    6: packLayer(6, data.v6.ranges),
    described: data.described,
  };
}

/** A part with its ranges as ValueRange objects again: the form tests and small tools read. */
export function unpackPart(part: PackedPart): SourceData {
  const data: SourceData = {
    fields: part.fields,
    values: part.values,
    v4: { rows: part.rows[4], ranges: unpackLayer(part[4]) },
    v6: { rows: part.rows[6], ranges: unpackLayer(part[6]) },
  };
  return part.described ? { ...data, described: part.described } : data;
}

/**
 * Joins the parts of one source (e.g. its IPv4 file and its IPv6 file) into one: values
 * interned again in one table; a family with ranges in one part keeps them as they are
 * (values renumbered), ranges of several parts are flattened together, a later part
 * winning where parts overlap.
 */
export function joinParts(parts: readonly PackedPart[]): PackedPart {
  if (parts.length === 1) return parts[0] as PackedPart;
  const table = new ValueTable();
  const renumbered = parts.map((part) => Int32Array.from(part.values, (values) => table.intern(values)));
  const family = (f: Family): PackedLayer => {
    const having = parts.flatMap((part, p) => (part[f].length > 0 ? [p] : []));
    if (having.length === 1) {
      const p = having[0] as number;
      const layer = (parts[p] as PackedPart)[f];
      const ids = renumbered[p] as Int32Array;
      return { ...layer, values: layer.values.map((value) => ids[value] as number) };
    }
    // The parts' ranges one after another, renumbered: a later part is a later row.
    const rows = new LayerBuilder(wordsOf(f), having.reduce((sum, p) => sum + (parts[p] as PackedPart)[f].length, 0));
    for (const p of having) {
      const layer = (parts[p] as PackedPart)[f];
      const ids = renumbered[p] as Int32Array;
      for (let i = 0; i < layer.length; i++) rows.push(layer.starts, i * layer.words, layer.ends, i * layer.words, ids[layer.values[i] as number] as number);
    }
    return flattenPackedInClusters(rows.layer());
  };
  return {
    fields: inFieldOrder(parts.flatMap((part) => part.fields)),
    values: table.values,
    rows: { 4: sum(parts, 4), 6: sum(parts, 6) },
    4: family(4),
    6: family(6),
    described: parts.find((part) => part.described)?.described,
  };
}

function sum(parts: readonly PackedPart[], family: Family): number {
  return parts.reduce((total, part) => total + part.rows[family], 0);
}

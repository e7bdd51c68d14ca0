import { inFieldOrder } from "../index/record-fields.ts";
import { flattenRows } from "./flatten.ts";
import type { ValueRange } from "./ranges.ts";
import { ValueTable, type SourceData, type SourceLayer } from "./source-data.ts";

/**
 * Joins the parts of one source (e.g. its IPv4 file and its IPv6 file) into one: values
 * interned again in one table, ranges of each family flattened together, a later part
 * winning where parts overlap.
 */
export function joinParts(parts: readonly SourceData[]): SourceData {
  if (parts.length === 1) return parts[0] as SourceData;
  const table = new ValueTable();
  const remapped = parts.map((part) => part.values.map((values) => table.intern(values)));
  const family = (pick: (part: SourceData) => SourceLayer): SourceLayer => {
    const rows: ValueRange<number>[] = [];
    let count = 0;
    parts.forEach((part, p) => {
      const layer = pick(part);
      count += layer.rows;
      const ids = remapped[p] as number[];
      for (const range of layer.ranges) rows.push({ start: range.start, end: range.end, value: ids[range.value] as number });
    });
    const sole = parts.filter((part) => pick(part).ranges.length > 0);
    return { rows: count, ranges: sole.length <= 1 ? rows : flattenRows(rows) };
  };
  return {
    fields: inFieldOrder(parts.flatMap((part) => part.fields)),
    values: table.values,
    v4: family((part) => part.v4),
    v6: family((part) => part.v6),
    described: parts.find((part) => part.described)?.described,
  };
}

import { Database } from "bun:sqlite";
import { readFileSync } from "node:fs";
import { isEmbedded } from "../config/paths.ts";
import { HOSTING_ASNS_KEY } from "../data-file/layout.ts";
import { writeAddress } from "../data-file/packed-address.ts";
import type { SourceInfo } from "../index/network-record.ts";
import { RangeIndex } from "../index/range-index.ts";
import type { FieldValues, RecordField } from "../index/record-fields.ts";
import { isDerivedField } from "./combine.ts";
import type { HostingList } from "./hosting-asns.ts";
import type { PackedPart } from "./join-parts.ts";
import { LayerBuilder, wordsOf, type PackedLayer } from "./packed-layer.ts";

/**
 * An iplookup data file read back as one source, so new data can be put in front of
 * it (`data import --with-default`): its segments become packed ranges, its records the
 * values (names derived from codes are left out: the new data set derives them again).
 * Its own sources come along, to be listed, with their licences, after the new ones.
 *
 * Its `privacy` is left out, like the names: the new data set puts it together again.
 * Its hosting list comes along (the new records' AS numbers decide), but not the ranges
 * of any signal feed it was built with: those sources are dropped from the list, so the
 * new data set claims no signal it cannot answer (the default data has no feeds).
 */
export function readDataFile(path: string): { part: PackedPart; sources: readonly SourceInfo[]; hostingList?: HostingList } {
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
  const listInfo = index.info.sources.find((source) => source.format === "hosting-asns");
  const asns = hostingAsnsIn(path);
  const hostingList = listInfo !== undefined && asns !== undefined ? { asns, info: listInfo } : undefined;
  return {
    part: { fields, values, rows: { 4: v4.length, 6: v6.length }, 4: v4, 6: v6 },
    sources: index.info.sources.filter((source) => source.signal === null),
    ...(hostingList !== undefined ? { hostingList } : {}),
  };
}

/** The hosting list recorded in a data file (AS number → provider), if it has one. */
function hostingAsnsIn(path: string): Map<number, string> | undefined {
  const db = isEmbedded(path) ? Database.deserialize(readFileSync(path)) : new Database(path, { readonly: true });
  try {
    const row = db.query<{ value: string }, [string]>("SELECT value FROM meta WHERE key = ?1").get(HOSTING_ASNS_KEY);
    return row === null ? undefined : new Map(JSON.parse(row.value) as Array<[number, string]>);
  } finally {
    db.close();
  }
}

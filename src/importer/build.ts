import type { NetworkRecord, SourceInfo } from "../index/network-record.ts";
import { countryName } from "./country-names.ts";
import type { DataFileContents } from "./data-file.ts";
import { flattenRows } from "./flatten.ts";
import { mergeLayers, type LayerValues } from "./merge.ts";
import type { Family, ValueRange } from "./ranges.ts";
import { readRows } from "./read-source.ts";
import type { SourceSpec } from "./source.ts";

/** Progress lines for a person watching an import. */
export type ImportLog = (message: string) => void;

/**
 * Builds a data set from its sources: each file flattened (later row wins), the layers
 * merged into one segment table per family, every distinct combination of values made
 * one record. Where two sources of the same kind both have a value, the first source
 * in `sources` wins.
 */
export async function buildDataSet(sources: readonly SourceSpec[], builtAt: Date, log: ImportLog = () => {}): Promise<DataFileContents> {
  const layers: Record<Family, ValueRange<string>[][]> = { 4: [], 6: [] };
  const infos: SourceInfo[] = [];
  for (const source of sources) {
    const counts = { rowsV4: 0, rowsV6: 0, rangesV4: 0, rangesV6: 0 };
    for (const family of [4, 6] as const) {
      const file = source.files[family];
      const rows = readRows(await Bun.file(file).text(), family, source.kind, file);
      const ranges = flattenRows(rows);
      layers[family].push(ranges);
      counts[family === 4 ? "rowsV4" : "rowsV6"] = rows.length;
      counts[family === 4 ? "rangesV4" : "rangesV6"] = ranges.length;
      log(`${source.name} IPv${family}: ${rows.length} rows, ${ranges.length} ranges after flattening`);
    }
    const { files: _files, kind: _kind, ...described } = source;
    infos.push({ ...described, ...counts });
  }

  const records: NetworkRecord[] = [];
  const ids = new Map<string, number>();
  const recordOf = (values: LayerValues): number => {
    if (values.every((value) => value === undefined)) return 0;
    const key = values.join("\u0001");
    let id = ids.get(key);
    if (id === undefined) {
      records.push(toRecord(sources, values));
      id = records.length;
      ids.set(key, id);
    }
    return id;
  };
  const v4 = mergeLayers(4, layers[4], recordOf);
  const v6 = mergeLayers(6, layers[6], recordOf);
  log(`merged: ${v4.starts.length} IPv4 and ${v6.starts.length} IPv6 segments, ${records.length} distinct records`);
  return {
    version: sources.map((source) => `${source.package}@${source.version}`).join(" "),
    builtAt: builtAt.toISOString(),
    sources: infos,
    records,
    v4,
    v6,
  };
}

function toRecord(sources: readonly SourceSpec[], values: LayerValues): NetworkRecord {
  let asn: number | null = null;
  let asName: string | null = null;
  let countryCode: string | null = null;
  sources.forEach((source, layer) => {
    const value = values[layer];
    if (value === undefined) return;
    if (source.kind === "asn" && asn === null) {
      const tab = value.indexOf("\t");
      asn = Number(value.slice(0, tab));
      asName = value.slice(tab + 1) || null;
    } else if (source.kind === "country" && countryCode === null) {
      countryCode = value;
    }
  });
  return { asn, as_name: asName, country_code: countryCode, country: countryCode === null ? null : countryName(countryCode) };
}

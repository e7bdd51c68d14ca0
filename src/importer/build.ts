import type { SourceInfo } from "../index/network-record.ts";
import { dataSetFields, RecordCombiner } from "./combine.ts";
import type { DataFileContents } from "./data-file.ts";
import { describeSource } from "./describe-source.ts";
import { joinParts } from "./join-parts.ts";
import { mergeLayers } from "./merge.ts";
import type { Progress } from "./progress.ts";
import type { ValueRange } from "./ranges.ts";
import { readDataFile } from "./read-data-file.ts";
import { readSourceFile } from "./read-source-file.ts";
import type { SourceData } from "./source-data.ts";
import type { SourceSpec } from "./source.ts";

/**
 * Builds a data set from its sources, given in precedence order: each file read into
 * disjoint ranges, the sources merged into one segment table per family, every distinct
 * combination of the sources' values made one record, each field taken from the first
 * source that has a value for it (combine.ts).
 */
export async function buildDataSet(
  sources: readonly SourceSpec[],
  builtAt: Date,
  progress?: Progress,
  options: {
    readonly builtBy?: DataFileContents["builtBy"];
    /** An iplookup data file whose data comes after every source (see read-data-file.ts). */
    readonly base?: string;
  } = {},
): Promise<DataFileContents> {
  const datas: SourceData[] = [];
  const infos: SourceInfo[] = [];
  for (const spec of sources) {
    const parts: SourceData[] = [];
    let format = "";
    for (const file of spec.files) {
      const read = await readSourceFile(file.path, file, progress);
      parts.push(read.data);
      collectGarbage();
      format = format === "" || format === read.format ? read.format : `${format}+${read.format}`;
    }
    const data = joinParts(parts);
    if (parts.length > 1) collectGarbage();
    const description = describeSource(
      spec.files.map((file) => file.path),
      spec.describe ?? {},
      data,
    );
    datas.push(data);
    infos.push({
      ...description,
      format,
      fields: data.fields,
      rowsV4: data.v4.rows,
      rowsV6: data.v6.rows,
      rangesV4: data.v4.ranges.length,
      rangesV6: data.v6.ranges.length,
    });
    progress?.line(
      `${description.name}: ${data.v4.rows.toLocaleString("en-US")} IPv4 and ${data.v6.rows.toLocaleString("en-US")} IPv6 rows → ${data.v4.ranges.length.toLocaleString("en-US")} and ${data.v6.ranges.length.toLocaleString("en-US")} ranges; fields ${data.fields.join(", ")}`,
    );
  }

  if (options.base !== undefined) {
    const base = readDataFile(options.base);
    datas.push(base.data);
    infos.push(...base.sources);
    progress?.line(`${options.base}: ${base.data.v4.ranges.length.toLocaleString("en-US")} IPv4 and ${base.data.v6.ranges.length.toLocaleString("en-US")} IPv6 segments, after the sources above`);
  }

  const fields = dataSetFields(infos.map((info) => info.fields));
  const combiner = new RecordCombiner(
    fields,
    datas.map((data) => data.values),
  );
  progress?.line("merging the sources");
  const mergeBegan = performance.now();
  // Each family's ranges are let go once merged: with city data they are most of the
  // memory an import holds.
  const layers = { 4: datas.map((data) => data.v4.ranges), 6: datas.map((data) => data.v6.ranges) };
  datas.length = 0;
  const merge = (family: 4 | 6) => {
    const ranges = layers[family];
    layers[family] = [];
    const active = ranges.flatMap((list, source) => (list.length > 0 ? [source] : []));
    return mergeLayers(
      family,
      active.map((source) => ranges[source] as ValueRange<number>[]),
      combiner.recorder(active),
    );
  };
  const v4 = merge(4);
  collectGarbage();
  const v6 = merge(6);
  collectGarbage();
  progress?.line(
    `merged: ${v4.starts.length.toLocaleString("en-US")} IPv4 and ${v6.starts.length.toLocaleString("en-US")} IPv6 segments, ${combiner.records.length.toLocaleString("en-US")} distinct records (${((performance.now() - mergeBegan) / 1000).toFixed(1)} s)`,
  );
  return {
    builtBy: options.builtBy ?? "import",
    version: infos.map((info) => `${info.origin}@${info.version}`).join(" "),
    builtAt: builtAt.toISOString(),
    fields,
    sources: infos,
    records: combiner.records,
    v4,
    v6,
  };
}

/**
 * An import is a batch job whose garbage (decoded rows, the ranges of a family once
 * merged) runs to gigabytes with city data; collecting between steps keeps the peak
 * near what is live instead of leaving it to the collector's own pace.
 */
function collectGarbage(): void {
  Bun.gc(true);
}

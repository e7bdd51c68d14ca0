import type { SourceInfo } from "../index/network-record.ts";
import { SIGNALS, type Privacy, type Signal } from "../index/privacy.ts";
import { dataSetFields, RecordCombiner } from "./combine.ts";
import type { DataFileContents } from "./data-file.ts";
import { describeSource } from "./describe-source.ts";
import type { HostingList } from "./hosting-asns.ts";
import { joinParts, type PackedPart } from "./join-parts.ts";
import { mergePacked } from "./merge.ts";
import type { Progress } from "./progress.ts";
import { readDataFile } from "./read-data-file.ts";
import { readSourceFile } from "./read-source-file.ts";
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
    /** A hosting list (hosting-asns.ts) the privacy field's hosting signal follows, after every source. */
    readonly hostingList?: HostingList;
  } = {},
): Promise<DataFileContents> {
  // Each source's ranges are packed as soon as it is read: with city data they are most
  // of the memory an import holds.
  const packed: PackedPart[] = [];
  const infos: SourceInfo[] = [];
  for (const [i, spec] of sources.entries()) {
    const source = await readSource(spec, i, progress);
    packed.push(source.packed);
    infos.push(source.info);
  }

  let hostingList = options.hostingList;
  if (options.base !== undefined) {
    const base = readDataFile(options.base);
    packed.push(base.part);
    infos.push(...base.sources);
    hostingList ??= base.hostingList;
    progress?.line(`${options.base}: ${base.part[4].length.toLocaleString("en-US")} IPv4 and ${base.part[6].length.toLocaleString("en-US")} IPv6 segments, after the sources above`);
  }
  if (hostingList !== undefined && !infos.includes(hostingList.info)) infos.push(hostingList.info);

  // The sources' files and their parts as read, before joining, go now: otherwise the
  // collector would free them only during the merge, which then starts gigabytes up.
  collectGarbage();
  const fields = dataSetFields(infos.map((info) => info.fields));
  const combiner = new RecordCombiner(
    fields,
    packed.map((source) => source.values),
    { present: infos.flatMap((info) => (info.signal === null ? [] : [info.signal])), hostingAsns: hostingList?.asns },
  );
  progress?.line("merging the sources");
  const mergeBegan = performance.now();
  const merge = (family: 4 | 6) => {
    const active = packed.flatMap((source, i) => (source[family].length > 0 ? [i] : []));
    return mergePacked(
      family,
      active.map((i) => (packed[i] as PackedPart)[family]),
      combiner.recorder(active),
    );
  };
  const v4 = merge(4);
  collectGarbage();
  const v6 = merge(6);
  combiner.endMerging();
  collectGarbage();
  progress?.line(
    `merged: ${v4.count.toLocaleString("en-US")} IPv4 and ${v6.count.toLocaleString("en-US")} IPv6 segments, ${combiner.records.length.toLocaleString("en-US")} distinct records (${((performance.now() - mergeBegan) / 1000).toFixed(1)} s)`,
  );
  return {
    builtBy: options.builtBy ?? "import",
    version: infos.map((info) => `${info.origin}@${info.version}`).join(" "),
    builtAt: builtAt.toISOString(),
    fields,
    sources: infos,
    records: combiner.records,
    privacyOf: (index) => combiner.privacyOf(index),
    v4,
    v6,
    ...(hostingList !== undefined ? { hostingAsns: hostingList.asns } : {}),
  };
}

/**
 * Reads source `index`'s (0-based) files, packing each as soon as it is read, joins them
 * and describes the source. A file that yields no rows is refused: an empty download, or
 * a page that is not data (a rate limit's "try later" answered with 200), would
 * otherwise replace the source's data with nothing.
 */
async function readSource(spec: SourceSpec, index: number, progress?: Progress): Promise<{ packed: PackedPart; info: SourceInfo }> {
  const parts: PackedPart[] = [];
  let format = "";
  for (const file of spec.files) {
    const read = await readSourceFile(file.path, { ...file, feed: spec.feed }, progress);
    if (read.part.rows[4] + read.part.rows[6] === 0) {
      throw new Error(`source ${index + 1} (${file.label ?? file.path}): it holds no rows (an empty file, or a page that is not data); refused`);
    }
    parts.push(read.part);
    collectGarbage(); // what reading the file left (decoded rows, a CSV's range objects)
    format = format === "" || format === read.format ? read.format : `${format}+${read.format}`;
  }
  const joined = joinParts(parts);
  const description = describeSource(
    spec.files.map((file) => file.path),
    spec.describe ?? {},
    joined,
  );
  const count = (n: number) => n.toLocaleString("en-US");
  progress?.line(
    `${description.name}: ${count(joined.rows[4])} IPv4 and ${count(joined.rows[6])} IPv6 rows → ${count(joined[4].length)} and ${count(joined[6].length)} ranges; fields ${joined.fields.join(", ")}`,
  );
  return {
    packed: joined,
    info: {
      ...description,
      format,
      signal: signalOf(joined.values),
      fields: joined.fields,
      rowsV4: joined.rows[4],
      rowsV6: joined.rows[6],
      rangesV4: joined[4].length,
      rangesV6: joined[6].length,
    },
  };
}

/** The signal a source's values give (a feed gives one), or null for a source of other fields. */
function signalOf(values: readonly { readonly privacy?: unknown }[]): Signal | null {
  for (const value of values) {
    const privacy = value.privacy as Privacy | null | undefined;
    if (privacy) for (const signal of SIGNALS) if (privacy[signal] === true) return signal;
  }
  return null;
}

/**
 * An import is a batch job whose garbage (decoded rows, the ranges of a family once
 * merged) runs to gigabytes with city data; collecting between steps keeps the peak
 * near what is live instead of leaving it to the collector's own pace.
 */
function collectGarbage(): void {
  Bun.gc(true);
}

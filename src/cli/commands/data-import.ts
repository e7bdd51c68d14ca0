import { mkdirSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { ConfigError } from "../../config/config-error.ts";
import { isEmbedded } from "../../config/paths.ts";
import { readSetting } from "../../config/settings.ts";
import type { DataSetInfo } from "../../index/network-record.ts";
import { RangeIndex } from "../../index/range-index.ts";
import { buildDataSet } from "../../importer/build.ts";
import { writeDataFile } from "../../importer/data-file.ts";
import { delimitedFormatHelp } from "../../importer/delimited/formats.ts";
import { LICENSE_NOT_STATED } from "../../importer/describe-source.ts";
import { lineProgress, streamProgress } from "../../importer/progress.ts";
import { dataInfoJson } from "../data-info-json.ts";
import { parseImportArgs } from "../import-args.ts";
import type { Command } from "../command.ts";
import { EXIT_OK } from "../io.ts";

export const importCommand: Command = {
  name: "import",
  summary: "build a data file from MMDB, CSV or TSV files and install it",
  help: `Usage: iplookup data import [--data PATH] [--json] [--with-default] [SOURCE OPTIONS] FILE [+ FILE] [[SOURCE OPTIONS] FILE [+ FILE]]...

Builds a new data file from the FILEs and installs it at --data in one step (written
beside it, checked, then renamed into place). A server reading that file picks the new
data up within a second, without a restart; a file that cannot be read stops the import
with the reason, and the installed data stays as it was.

FILEs come in precedence order: each field of a result comes from the first source
that has a value for it at that address. "FILE + FILE" makes two files one source
(e.g. a data set's IPv4 and IPv6 halves). Formats, detected from each file unless
--format:
  mmdb         MaxMind DB: GeoLite2/GeoIP2 ASN, Country and City; DB-IP lite; IPinfo
               lite; ip-location-db's MMDB packages
${delimitedFormatHelp()
  .map((line) => `  ${line}`)
  .join("\n")}
(start and end as address text, or as integers in the -num/-u32 variants).

  --data PATH      the data file to write (env IPLOOKUP_DATA; the binary's embedded
                   data cannot be replaced: name a file, and serve with the same --data)
  --json           print the new data set's description as JSON
  --with-default   put the default data set (shipped with iplookup, or embedded in
                   the binary) after the FILEs, with its sources' licences: e.g. a
                   city file in front of the default ASN and country data

Source options, each for the FILE that follows it:
  --format F           one of the formats above
  --family 4|6         the family of integer addresses, when the file name does not say
  --name TEXT          how data info names the source
  --license TEXT       its licence (known data sets are recognised)
  --attribution TEXT   the attribution its licence asks for
  --url URL            where it comes from
  --source-version V   its version (default: its package version or build date)`,
  async run(argv, context) {
    const args = parseImportArgs(argv);
    const path = readSetting("data", args.data === undefined ? {} : { data: args.data }, context.env, context.defaultDataPath);
    if (isEmbedded(path)) {
      throw new ConfigError("the data embedded in the binary cannot be replaced; name the file to write with --data PATH (and serve with the same --data)");
    }
    const began = performance.now();
    const progress = context.io.terminal ? streamProgress(context.io.terminal) : lineProgress((line) => context.io.err(line));
    const contents = await buildDataSet(args.sources, context.now(), progress, { base: args.withDefault ? context.defaultDataPath : undefined });
    mkdirSync(dirname(path), { recursive: true });
    const writeBegan = performance.now();
    let info: DataSetInfo | undefined;
    writeDataFile(path, contents, (written) => {
      info = RangeIndex.open(written).info;
    });
    if (!info) throw new Error("the written data file was not checked");
    progress.line(`wrote and checked ${path} (${((performance.now() - writeBegan) / 1000).toFixed(1)} s)`);
    const seconds = (performance.now() - began) / 1000;
    if (args.json) {
      context.io.out(JSON.stringify({ path, bytes: statSync(path).size, seconds: Number(seconds.toFixed(2)), ...dataInfoJson(info) }));
      return EXIT_OK;
    }
    const lines = [
      `Installed ${path} (${(statSync(path).size / 2 ** 20).toFixed(1)} MiB) in ${seconds.toFixed(1)} s; data version ${info.dataVersion}.`,
      `Fields: ${info.fields.join(", ")}`,
      `Segments: ${info.segmentsV4.toLocaleString("en-US")} IPv4, ${info.segmentsV6.toLocaleString("en-US")} IPv6; ${info.records.toLocaleString("en-US")} distinct records.`,
      "Sources, first wins:",
      ...info.sources.map((source, i) => `  ${i + 1}. ${source.name} (${source.format}): ${source.fields.join(", ")}`),
    ];
    for (const source of info.sources) {
      if (source.license === LICENSE_NOT_STATED) lines.push(`Note: the licence of ${source.name} is not known; name it with --license and --attribution before the file.`);
    }
    context.io.out(lines.join("\n"));
    return EXIT_OK;
  },
};

import { showingControls } from "../../access/plain-text.ts";
import { isEmbedded } from "../../config/paths.ts";
import { givenAs, readSetting } from "../../config/settings.ts";
import { parseCommandArgs } from "../args.ts";
import { dataFileText, dataInfoJson } from "../data-info-json.ts";
import { DATA_FLAG_HELP } from "../flag-help.ts";
import { openIndex } from "../open-data.ts";
import type { Command } from "../command.ts";
import { EXIT_OK } from "../io.ts";
import { recipeForInfo, recipeJson, recipeLines } from "../recipe-text.ts";
import { importCommand } from "./data-import.ts";
import { updateCommand } from "./data-update.ts";

const info: Command = {
  name: "info",
  summary: "the data set: sources, versions, licences, attribution, range counts",
  help: `Usage: iplookup data info [--json] [--data PATH]

Describes the data file: when it was built, its data version (the X-Data-Version
header of every lookup), the fields its results carry, and each source in precedence
order with its version, build date and age, licence, attribution, range counts and,
for the sources of privacy signals (feeds, the hosting list), the signal it gives.

  --json           print JSON
${DATA_FLAG_HELP}`,
  async run(argv, context) {
    const { flags } = parseCommandArgs(argv, { settings: ["data"], booleans: ["json"] });
    const path = readSetting("data", flags, context.env, context.defaultDataPath);
    const dataInfo = openIndex(path, givenAs("data", flags, context.env)).info;
    const now = context.now().getTime();
    if (flags.json) {
      const embedded = isEmbedded(path);
      const described = dataInfoJson(dataInfo);
      // Each source's age in seconds (null when it does not say when it was built).
      const sources = (described.sources as Array<Record<string, unknown>>).map((source, i) => ({ ...source, age_seconds: ageSeconds(dataInfo.sources[i]?.builtAt ?? "", now) }));
      context.io.out(JSON.stringify({ path: embedded ? null : path, embedded, ...described, sources, recipe: recipeJson(recipeForInfo(path)) }));
      return EXIT_OK;
    }
    const count = (n: number) => n.toLocaleString("en-US");
    const lines = [
      `Data file: ${dataFileText(path)}`,
      `Built: ${dataInfo.builtAt}   data version: ${dataInfo.dataVersion}`,
      `Fields: ${dataInfo.fields.join(", ")}`,
      `Segments: ${count(dataInfo.segmentsV4)} IPv4, ${count(dataInfo.segmentsV6)} IPv6; ${count(dataInfo.records)} distinct records`,
      "",
      "Sources, in precedence order (a field comes from the first source that has it):",
      "",
    ];
    dataInfo.sources.forEach((source, i) => {
      lines.push(
        `${i + 1}. ${source.name} ${source.version}`,
        `  from:        ${source.origin} (${source.format})`,
        `  built:       ${source.builtAt ? `${source.builtAt} (${ageText(ageSeconds(source.builtAt, now))})` : "not stated"}`,
        ...(source.signal !== null ? [`  signal:      ${source.signal} (the privacy field's ${source.signal}${source.signal === "hosting" || source.signal === "relay" ? ", and its service" : ""})`] : []),
        `  licence:     ${source.license}`,
        `  attribution: ${source.attribution || "none given"}`,
        ...(source.url ? [`  url:         ${source.url}`] : []),
        `  fields:      ${source.fields.join(", ")}`,
        source.format === "hosting-asns"
          ? `  AS numbers:  ${count(source.rowsV4)} (an address is hosting when its AS is one of them)`
          : `  ranges:      ${count(source.rangesV4)} IPv4, ${count(source.rangesV6)} IPv6 (from ${count(source.rowsV4)} and ${count(source.rowsV6)} rows)`,
        "",
      );
    });
    lines.push(...recipeLines(recipeForInfo(path)));
    // Each line with its control and bidirectional characters written out: names, ETags
    // and archive members come from downloads, and a data file built before they were
    // written out on import may hold them as they came.
    context.io.out(lines.map(showingControls).join("\n").trimEnd());
    return EXIT_OK;
  },
};

/** Seconds from `builtAt` (ISO 8601) to `now`, or null when it is not a time. */
function ageSeconds(builtAt: string, now: number): number | null {
  const time = Date.parse(builtAt);
  return Number.isNaN(time) ? null : Math.max(0, Math.round((now - time) / 1000));
}

/** An age for people: "5 minutes old", "3 hours old", "12 days old". */
export function ageText(seconds: number | null): string {
  if (seconds === null) return "age unknown";
  if (seconds < 120) return `${seconds} seconds old`;
  if (seconds < 7200) return `${Math.floor(seconds / 60)} minutes old`;
  if (seconds < 172800) return `${Math.floor(seconds / 3600)} hours old`;
  return `${Math.floor(seconds / 86400)} days old`;
}

export const DATA_COMMANDS: readonly Command[] = [info, importCommand, updateCommand];

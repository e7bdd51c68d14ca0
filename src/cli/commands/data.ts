import { isEmbedded } from "../../config/paths.ts";
import { readSetting } from "../../config/settings.ts";
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
order with its version, build date, licence, attribution and range counts.

  --json           print JSON
${DATA_FLAG_HELP}`,
  async run(argv, context) {
    const { flags } = parseCommandArgs(argv, { settings: ["data"], booleans: ["json"] });
    const path = readSetting("data", flags, context.env, context.defaultDataPath);
    const dataInfo = openIndex(path).info;
    if (flags.json) {
      const embedded = isEmbedded(path);
      context.io.out(JSON.stringify({ path: embedded ? null : path, embedded, ...dataInfoJson(dataInfo), recipe: recipeJson(recipeForInfo(path)) }));
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
        `  built:       ${source.builtAt || "not stated"}`,
        `  licence:     ${source.license}`,
        `  attribution: ${source.attribution || "none given"}`,
        ...(source.url ? [`  url:         ${source.url}`] : []),
        `  fields:      ${source.fields.join(", ")}`,
        `  ranges:      ${count(source.rangesV4)} IPv4, ${count(source.rangesV6)} IPv6 (from ${count(source.rowsV4)} and ${count(source.rowsV6)} rows)`,
        "",
      );
    });
    lines.push(...recipeLines(recipeForInfo(path)));
    context.io.out(lines.join("\n").trimEnd());
    return EXIT_OK;
  },
};

export const DATA_COMMANDS: readonly Command[] = [info, importCommand, updateCommand];

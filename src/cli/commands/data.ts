import { readSetting } from "../../config/settings.ts";
import { parseCommandArgs } from "../args.ts";
import { DATA_FLAG_HELP } from "../flag-help.ts";
import { openIndex } from "../open-data.ts";
import type { Command } from "../command.ts";
import { EXIT_OK } from "../io.ts";

const info: Command = {
  name: "info",
  summary: "the data set: sources, versions, licences, attribution, range counts",
  help: `Usage: iplookup data info [--json] [--data PATH]

Describes the data file: when it was built, and each source with its version,
licence, attribution and range counts.

  --json           print JSON
${DATA_FLAG_HELP}`,
  async run(argv, context) {
    const { flags } = parseCommandArgs(argv, { settings: ["data"], booleans: ["json"] });
    const path = readSetting("data", flags, context.env, context.defaultDataPath);
    const dataInfo = openIndex(path).info;
    if (flags.json) {
      context.io.out(JSON.stringify({ path, ...dataInfo }));
      return EXIT_OK;
    }
    const lines = [`Data file: ${path}`, `Built: ${dataInfo.builtAt}`, ""];
    for (const source of dataInfo.sources) {
      lines.push(
        `${source.name} ${source.version}`,
        `  licence:     ${source.license}`,
        `  attribution: ${source.attribution}`,
        `  ranges:      ${source.rangesV4.toLocaleString("en-US")} IPv4, ${source.rangesV6.toLocaleString("en-US")} IPv6`,
        "",
      );
    }
    context.io.out(lines.join("\n").trimEnd());
    return EXIT_OK;
  },
};

export const DATA_COMMANDS: readonly Command[] = [info];

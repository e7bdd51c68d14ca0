import { readSetting } from "../../config/settings.ts";
import { ApiError } from "../../errors/api-error.ts";
import { LookupService } from "../../lookup/lookup-service.ts";
import { parseCommandArgs } from "../args.ts";
import { DATA_FLAG_HELP } from "../flag-help.ts";
import { openIndex } from "../open-data.ts";
import type { Command } from "../command.ts";
import { EXIT_FAILED, EXIT_OK } from "../io.ts";

export const lookupCommand: Command = {
  name: "lookup",
  summary: "look addresses up offline (no server, no key)",
  help: `Usage: iplookup lookup IP... [--data PATH]

Looks addresses up in the data file directly, without a server or a key, and prints
one LookupResult as JSON per line. Addresses that are not valid public addresses are
reported on stderr, and the exit code is then 1.

${DATA_FLAG_HELP}`,
  async run(argv, context) {
    const { flags, positionals } = parseCommandArgs(argv, { settings: ["data"], positionals: [1, Number.MAX_SAFE_INTEGER] });
    const index = openIndex(readSetting("data", flags, context.env, context.defaultDataPath));
    const service = new LookupService(() => index);
    let failed = false;
    for (const text of positionals) {
      try {
        const [result] = service.lookup(service.resolve([text]));
        context.io.out(JSON.stringify(result));
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        failed = true;
        context.io.err(`iplookup: ${error.detail}`);
      }
    }
    return failed ? EXIT_FAILED : EXIT_OK;
  },
};

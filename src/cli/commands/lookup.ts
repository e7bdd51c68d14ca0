import { showingControls } from "../../access/plain-text.ts";
import { givenAs, readSetting } from "../../config/settings.ts";
import type { Address } from "../../address/address.ts";
import { ApiError } from "../../errors/api-error.ts";
import { LookupService } from "../../lookup/lookup-service.ts";
import { parseCommandArgs } from "../args.ts";
import { DATA_FLAG_HELP, STATE_FLAG_HELP } from "../flag-help.ts";
import { openIndex } from "../open-data.ts";
import { readCorrections } from "../read-corrections.ts";
import type { Command } from "../command.ts";
import { EXIT_FAILED, EXIT_OK } from "../io.ts";

export const lookupCommand: Command = {
  name: "lookup",
  summary: "look addresses up offline (no server, no key)",
  help: `Usage: iplookup lookup IP... [--json] [--data PATH] [--state PATH|URL]

Looks addresses up in the data file directly, without a server or a key, and prints
one LookupResult as JSON per line. Addresses that are not valid public addresses are
reported on stderr, and the exit code is then 1. The local corrections of the state
(iplookup corrections) apply as they do on a server; without --state or
IPLOOKUP_STATE, those of the default state file, when it exists.

  --json           print what the API answers: for one IP the LookupResult of
                   POST /v1/lookup, for several {"results":[...]} as POST
                   /v1/lookup/batch does; like the API, nothing is printed when
                   any IP is refused
${DATA_FLAG_HELP}
${STATE_FLAG_HELP}`,
  async run(argv, context) {
    const { flags, positionals } = parseCommandArgs(argv, { settings: ["data", "state"], booleans: ["json"], positionals: [1, Number.MAX_SAFE_INTEGER], arguments: ["IP"] });
    const index = openIndex(readSetting("data", flags, context.env, context.defaultDataPath), givenAs("data", flags, context.env));
    const corrections = await readCorrections(flags, context);
    const service = new LookupService(() => index, () => corrections);
    const addresses: Address[] = [];
    let failed = false;
    for (const text of positionals) {
      try {
        const [address] = service.resolve([text]);
        addresses.push(address as Address);
        // JSON leaves DEL, C1 and bidirectional controls (in an AS name, say) as they are;
        // written out as \u escapes, the line is the same JSON and cannot act on a terminal.
        if (!flags.json) context.io.out(showingControls(JSON.stringify(service.lookup([address as Address])[0])));
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        failed = true;
        context.io.err(`iplookup: ${error.detail}`);
      }
    }
    if (flags.json && !failed) {
      // The API's own writer, so the bytes are the ones a server would send.
      const { body } = service.lookupJson(addresses, addresses.length > 1);
      context.io.out(new TextDecoder().decode(body));
    }
    return failed ? EXIT_FAILED : EXIT_OK;
  },
};

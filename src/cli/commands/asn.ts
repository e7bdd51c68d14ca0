import { showingControls } from "../../access/plain-text.ts";
import { AsnService } from "../../asn/asn-service.ts";
import type { AsnResult, AsnSummary } from "../../asn/asn-json.ts";
import { givenAs, readSetting } from "../../config/settings.ts";
import { ConfigError } from "../../config/config-error.ts";
import { ApiError } from "../../errors/api-error.ts";
import type { RangeIndex } from "../../index/range-index.ts";
import { parseCommandArgs } from "../args.ts";
import type { Command } from "../command.ts";
import { DATA_FLAG_HELP, STATE_FLAG_HELP } from "../flag-help.ts";
import { EXIT_FAILED, EXIT_OK } from "../io.ts";
import { openIndex } from "../open-data.ts";
import { readCorrections } from "../read-corrections.ts";
import { formatTable } from "../table.ts";

export const asnCommand: Command = {
  name: "asn",
  summary: "an autonomous system's prefixes, or a search of AS names (offline)",
  help: `Usage: iplookup asn ASN [--json] [--data PATH] [--state PATH|URL]
       iplookup asn --search TEXT [--json] [--data PATH] [--state PATH|URL]

Answers from the data file directly, without a server or a key, what GET /v1/asn/{asn}
and GET /v1/asn?q=TEXT answer: an AS's name, country, IPv4 address count and the
fewest CIDR blocks covering its addresses (ASN is 13335 or AS13335); or the ASes, at
most 50, whose name contains TEXT (any case) or whose number starts with it, most
addresses first. An AS number that is not valid or not public, or a search text that
is empty or over 64 characters, is reported on stderr and the exit code is then 1.
The local corrections of the state (iplookup corrections) apply as they do on a
server; without --state or IPLOOKUP_STATE, those of the default state file, when it
exists.

  --search TEXT    search AS names and numbers instead
  --json           print what the API answers, byte for byte
${DATA_FLAG_HELP}
${STATE_FLAG_HELP}`,
  async run(argv, context) {
    const { flags, positionals } = parseCommandArgs(argv, { settings: ["data", "state"], strings: ["search"], booleans: ["json"], positionals: [0, 1] });
    const search = flags.search as string | undefined;
    if ((search === undefined) === (positionals.length === 0)) throw new ConfigError("give either an AS number or --search TEXT");
    const dataPath = readSetting("data", flags, context.env, context.defaultDataPath);
    let index: RangeIndex | undefined;
    const corrections = await readCorrections(flags, context);
    // The input is checked before the data is loaded, as the API checks it before charging.
    const service = new AsnService(() => (index ??= openIndex(dataPath, givenAs("data", flags, context.env))), () => corrections);
    let answer;
    try {
      answer = search === undefined ? await service.answer(service.check(positionals[0] as string)) : await service.search(service.checkQuery(search, "--search"));
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      context.io.err(`iplookup: ${error.detail}`);
      return EXIT_FAILED;
    }
    const json = new TextDecoder().decode(answer.body);
    if (flags.json) context.io.out(json);
    // AS names come from downloaded data: their control and bidirectional characters are
    // written out for the terminal (--json keeps them as the API answers them).
    else if (search === undefined) context.io.out(forTerminal(describeAs(JSON.parse(json) as AsnResult)));
    else context.io.out(forTerminal(describeSearch(JSON.parse(json) as { results: AsnSummary[] })));
    return EXIT_OK;
  },
};

/** Lines for a terminal: each with its control and bidirectional characters written out. */
function forTerminal(lines: string): string {
  return lines.split("\n").map(showingControls).join("\n");
}

/** An AS for people: a heading line, its counts, then its prefixes one a line. */
function describeAs(result: AsnResult): string {
  if (!result.found) return `AS${result.asn}: not in the data`;
  const country = result.country_code === null ? "no country" : `${result.country_code}, ${result.country}`;
  const lines = [`AS${result.asn} ${result.name ?? "(no name)"} (${country})`];
  if (result.hosting !== null) lines.push(`hosting: ${result.hosting ? "yes" : "no"}`);
  lines.push(`IPv4: ${count(result.num_ips, "address", "addresses")} in ${count(result.prefixes.length, "prefix", "prefixes")}`);
  lines.push(...result.prefixes.map((prefix) => `  ${prefix}`));
  lines.push(`IPv6: ${count(result.prefixes6.length, "prefix", "prefixes")}`);
  lines.push(...result.prefixes6.map((prefix) => `  ${prefix}`));
  return lines.join("\n");
}

function describeSearch(answer: { results: AsnSummary[] }): string {
  if (answer.results.length === 0) return "no AS found";
  return formatTable(
    ["ASN", "COUNTRY", "IPV4 ADDRESSES", "NAME"],
    answer.results.map((entry) => [`AS${entry.asn}`, entry.country_code ?? "-", entry.num_ips.toLocaleString("en-US"), entry.name ?? "-"]),
  );
}

function count(n: number, one: string, many: string): string {
  return `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`;
}

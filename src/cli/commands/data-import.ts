import { statSync } from "node:fs";
import { ConfigError } from "../../config/config-error.ts";
import { isEmbedded } from "../../config/paths.ts";
import { readSetting } from "../../config/settings.ts";
import { delimitedFormatHelp } from "../../importer/delimited/formats.ts";
import { LICENSE_NOT_STATED } from "../../importer/describe-source.ts";
import { lineProgress, streamProgress } from "../../importer/progress.ts";
import { dataInfoJson } from "../data-info-json.ts";
import { DOWNLOAD_FLAGS_HELP } from "../flag-help.ts";
import { parseImportArgs } from "../import-args.ts";
import type { Command } from "../command.ts";
import { EXIT_OK } from "../io.ts";
import { cleaningUpOnStop } from "../stop-signals.ts";

export const importCommand: Command = {
  name: "import",
  summary: "build a data file from MMDB, CSV or TSV files, signal feeds or URLs and install it",
  help: `Usage: iplookup data import [--data PATH] [--json] [--with-default] [--require-checksum]
                          [--download-timeout DURATION] [--max-expanded SIZE]
                          [SOURCE OPTIONS] FILE [+ FILE] [[SOURCE OPTIONS] FILE [+ FILE]]...

Builds a new data file from the FILEs and installs it at --data in one step (written
beside it, checked, then renamed into place). A server reading that file picks the new
data up within a second, without a restart; a file that cannot be read stops the import
with the reason, and the installed data stays as it was. Stopped by SIGTERM, SIGINT or
SIGHUP before the new file is in place (one that comes while it is written takes effect
when the write ends), an import removes its downloads and the file it was writing, and
exits 128 + the signal's number; once the new file is in place, it finishes and exits 0.

A FILE may be an http:// or https:// URL (downloaded beside --data, with progress on a
terminal), and may be compressed: .gz, .tar.gz/.tgz or .zip, the data file inside found
by its format. Credentials: https://USER:PASSWORD@host/..., or IPLOOKUP_DOWNLOAD_AUTH
(USER:PASSWORD, or HOST=USER:PASSWORD ...), sent as HTTP Basic authentication; they are
never shown or stored. A URL's {YYYY} and {MM} are this month's (UTC). The data file
records how it was built, so that 'data update' can build it again.

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
Privacy and hosting signal feeds (see docs/signals.md), each a source of the result's
privacy field:
  aws-ip-ranges, google-cloud, azure-service-tags, oracle-cloud
               the cloud providers' own ranges (AWS ip-ranges.json, Google Cloud
               cloud.json, Azure Service Tags, Oracle public_ip_ranges.json): hosting
  geofeed      an RFC 8805 geofeed, with --signal hosting|relay --service NAME
  address-list addresses and CIDR blocks, one a line, # comments (Tor's bulk exit
               list, Cloudflare's ips-v4), with --signal tor|vpn|proxy|hosting|relay

  --data PATH      the data file to write (env IPLOOKUP_DATA; the binary's embedded
                   data cannot be replaced: name a file, and serve with the same --data)
  --json           print the new data set's description as JSON
  --with-default   put the default data set (shipped with iplookup, or embedded in
                   the binary) after the FILEs, with its sources' licences: e.g. a
                   city file in front of the default ASN and country data
  --require-checksum  refuse a FILE that has no checksum (given or published)
${DOWNLOAD_FLAGS_HELP}

Source options, each for the FILE that follows it:
  --format F           one of the formats above
  --family 4|6         the family of integer addresses, when the file name does not say
  --name TEXT          how data info names the source
  --license TEXT       its licence (known data sets are recognised)
  --attribution TEXT   the attribution its licence asks for
  --url URL            where it comes from
  --source-version V   its version (default: its package version or build date)
  --signal S           what a list's or geofeed's addresses are: tor, vpn, proxy,
                       hosting or relay
  --service NAME       the provider a hosting or relay list's addresses belong to
                       (privacy.service)
  --sha256 HEX|URL     the SHA-256 the FILE must have, or a checksum file's URL
                       (without it, the publisher's: URL.sha256, and for a URL with
                       a query also its path with .sha256 before the query; 404 or
                       403 at both is none); a mismatch refuses`,
  async run(argv, context) {
    const args = parseImportArgs(argv);
    const path = readSetting("data", args.data === undefined ? {} : { data: args.data }, context.env, context.defaultDataPath);
    if (isEmbedded(path)) {
      throw new ConfigError("the data embedded in the binary cannot be replaced; name the file to write with --data PATH (and serve with the same --data)");
    }
    // The importers load with the command that runs them, not with every command line.
    const { abandonUnfinished, importDataSet } = await import("../../importer/install.ts");
    const began = performance.now();
    const progress = context.io.terminal ? streamProgress(context.io.terminal) : lineProgress((line) => context.io.err(line));
    // Stopped by a signal, the import removes its downloads and unfinished data file and
    // exits 128 + the signal's number; the installed file stays as it was.
    const info = await cleaningUpOnStop(abandonUnfinished, (committed) =>
      importDataSet(path, args.sources, {
        committed,
        now: context.now(),
        progress,
        env: context.env,
        base: args.withDefault ? context.defaultDataPath : undefined,
        timeouts: { timeoutMs: readSetting("downloadTimeout", args.downloads, context.env) },
        maxExpanded: readSetting("maxExpanded", args.downloads, context.env),
        requireChecksum: args.downloads.requireChecksum,
      }),
    );
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

import { existsSync, statSync } from "node:fs";
import { ConfigError } from "../../config/config-error.ts";
import { isEmbedded } from "../../config/paths.ts";
import { givenAs, readSetting } from "../../config/settings.ts";
import { readRecipe, type Recipe } from "../../data-file/recipe.ts";
import { redactSecrets } from "../../importer/fetch/locations.ts";
import { lineProgress, streamProgress } from "../../importer/progress.ts";
import type { UpdateOutcome } from "../../importer/update.ts";
import { parseCommandArgs } from "../args.ts";
import { howToRun, shellWord } from "../command-name.ts";
import { CommandFailed, type Command } from "../command.ts";
import { dataInfoJson } from "../data-info-json.ts";
import { DATA_FLAG_HELP, DOWNLOAD_FLAGS_HELP, STATE_FLAG_HELP } from "../flag-help.ts";
import { EXIT_OK } from "../io.ts";
import { announceDataUpdate } from "../data-update-events.ts";
import { cleaningUpOnStop } from "../stop-signals.ts";
import { UpdateBusyError } from "../../importer/update-lock.ts";

export const updateCommand: Command = {
  name: "update",
  summary: "build the data file again from the sources it records, if any changed",
  help: `Usage: iplookup data update [--data PATH] [--state PATH|URL] [--json] [--require-checksum]
                          [--download-timeout DURATION] [--max-expanded SIZE]

Builds the data file again from the sources 'data import' recorded in it: each URL is
asked whether it changed (If-None-Match, If-Modified-Since), each local file compared
by size, time and SHA-256. When nothing changed, says so and leaves the file as it is
(exit 0). Otherwise imports again and installs the new file as 'data import' does: a
server reading it swaps it in within a second, no request failing.

Checksums are checked as at the import: --sha256, or the one the publisher puts
beside the download (URL.sha256, and for a URL with a query also its path with .sha256
before the query); the output names the checksum verified, or says that none is
published. Any failure (network, HTTP status, checksum, a file that cannot be read, a
checksum that cannot be looked for) leaves the installed file as it was and exits 1,
naming the source and the reason. One update of a file runs at a time: while another
(or an import, or serve --update-every's) runs, this one says so and exits 1.

Credentials are never stored: a source downloaded with them needs
IPLOOKUP_DOWNLOAD_AUTH (USER:PASSWORD, or HOST=USER:PASSWORD ...).

A change, or a failure, is announced to the webhooks (data.updated,
data.update_failed) through the state named by --state, when it exists (finding
another update running is no failure: nothing is announced). Stopped by SIGTERM,
SIGINT or SIGHUP before the new file is in place (one that comes while it is written
takes effect when the write ends), an update removes its downloads and the file it was
writing, and exits 128 + the signal's number; once the new file is in place, it finishes
(and announces) and exits 0.

  --json           print the outcome as JSON: {"changed":false,...} or the new data set
  --require-checksum  refuse a source that has no checksum (given or published)
${DOWNLOAD_FLAGS_HELP}
${DATA_FLAG_HELP}
${STATE_FLAG_HELP}`,
  async run(argv, context) {
    const { flags } = parseCommandArgs(argv, { settings: ["data", "state", "downloadTimeout", "maxExpanded"], booleans: ["json", "require-checksum"] });
    const statePath = readSetting("state", flags, context.env);
    const path = readSetting("data", flags, context.env, context.defaultDataPath);
    if (isEmbedded(path)) {
      throw new ConfigError("the data embedded in the binary cannot be updated; import data into a file with 'data import --data PATH …' (and serve with the same --data)");
    }
    if (!existsSync(path)) throw new ConfigError(`${givenAs("data", flags, context.env)}: there is no data file at ${path}`);
    const recipe = recipeOf(path, context);
    const progress = context.io.terminal ? streamProgress(context.io.terminal) : lineProgress((line) => context.io.err(line));
    // The importers load with the command that runs them, not with every command line.
    const { updateDataFile } = await import("../../importer/update.ts");
    const { abandonUnfinished } = await import("../../importer/install.ts");
    const began = performance.now();
    let outcome: UpdateOutcome;
    try {
      // Stopped by a signal, the update removes its downloads and unfinished data file
      // and exits 128 + the signal's number; the installed file stays as it was.
      outcome = await cleaningUpOnStop(abandonUnfinished, (committed) =>
        updateDataFile(path, recipe, {
          committed,
          now: context.now(),
          progress,
          env: context.env,
          base: context.defaultDataPath,
          timeouts: { timeoutMs: readSetting("downloadTimeout", flags, context.env) },
          maxExpanded: readSetting("maxExpanded", flags, context.env),
          requireChecksum: flags["require-checksum"] === true,
        }),
      );
    } catch (error) {
      if (error instanceof ConfigError) throw error;
      const reason = redactSecrets((error as Error)?.message ?? String(error));
      // Another update runs: this one did nothing, and that one announces its own outcome.
      if (!(error instanceof UpdateBusyError)) await announceDataUpdate(statePath, context, { ok: false, path, reason });
      throw new CommandFailed(`data update failed: ${reason}; ${path} is left as it was`);
    }
    const seconds = (performance.now() - began) / 1000;
    if (!outcome.changed) {
      if (flags.json) context.io.out(JSON.stringify({ changed: false, path, checked: outcome.checked }));
      else context.io.out(`No source of ${path} changed (${outcome.checked} checked); the file is left as it was.`);
      return EXIT_OK;
    }
    const { info, changes } = outcome;
    await announceDataUpdate(statePath, context, { ok: true, path, dataVersion: info.dataVersion, builtAt: info.builtAt, changes });
    if (flags.json) {
      context.io.out(JSON.stringify({ changed: true, path, changes, bytes: statSync(path).size, seconds: Number(seconds.toFixed(2)), ...dataInfoJson(info) }));
      return EXIT_OK;
    }
    context.io.out(
      [
        `Updated ${path} (${(statSync(path).size / 2 ** 20).toFixed(1)} MiB) in ${seconds.toFixed(1)} s; data version ${info.dataVersion}.`,
        "Changed:",
        ...changes.map((change) => `  ${change}`),
        `Segments: ${info.segmentsV4.toLocaleString("en-US")} IPv4, ${info.segmentsV6.toLocaleString("en-US")} IPv6; ${info.records.toLocaleString("en-US")} distinct records.`,
      ].join("\n"),
    );
    return EXIT_OK;
  },
};

function recipeOf(path: string, context: Parameters<Command["run"]>[1]): Recipe {
  let recipe: Recipe | null;
  try {
    recipe = readRecipe(path);
  } catch (error) {
    throw new CommandFailed((error as Error).message);
  }
  if (recipe === null) {
    throw new CommandFailed(
      `${path} does not record the sources it was built from (it was built by 'bun run data:default', or by an iplookup that did not record them), so it cannot be updated; build it once with '${howToRun(context, `data import --data ${shellWord(path)} …`)}', then update it`,
    );
  }
  return recipe;
}

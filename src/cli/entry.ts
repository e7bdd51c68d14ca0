import { processIo } from "./io.ts";
import { runCli } from "./run.ts";

/** Runs the command line of this process and sets its exit code. */
export async function main(defaults: { dataPath: string; selfCommand: string[]; workerEntry?: string }): Promise<void> {
  // A reader that stops reading (`iplookup asn AS16509 | head`) ends the output, as a
  // closed pipe ends any Unix filter: quietly, not with an unhandled EPIPE.
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error;
    process.exit(process.exitCode ?? 0);
  });
  process.exitCode = await runCli(process.argv.slice(2), {
    env: process.env,
    io: processIo,
    now: () => new Date(),
    defaultDataPath: defaults.dataPath,
    selfCommand: defaults.selfCommand,
    workerEntry: defaults.workerEntry,
  });
}

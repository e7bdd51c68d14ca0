import { processIo } from "./io.ts";
import { runCli } from "./run.ts";

/** Runs the command line of this process and sets its exit code. */
export async function main(defaults: { dataPath: string; selfCommand: string[]; workerEntry?: string }): Promise<void> {
  process.exitCode = await runCli(process.argv.slice(2), {
    env: process.env,
    io: processIo,
    now: () => new Date(),
    defaultDataPath: defaults.dataPath,
    selfCommand: defaults.selfCommand,
    workerEntry: defaults.workerEntry,
  });
}

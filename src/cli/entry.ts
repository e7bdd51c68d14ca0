import { processIo, stderrLog } from "./io.ts";
import { runCli } from "./run.ts";

/**
 * How long a finished command waits for its log lines: while the reader takes none for
 * LOG_IDLE_MS, it is stalled; LOG_MAX_MS bounds a reader that takes them slowly.
 */
const LOG_IDLE_MS = 200;
const LOG_MAX_MS = 2000;

/** Runs the command line of this process and sets its exit code. */
export async function main(defaults: { dataPath: string; selfCommand: string[]; workerEntry?: string }): Promise<void> {
  // A reader that stops reading (`iplookup asn AS16509 | head`) ends the output, as a
  // closed pipe ends any Unix filter: quietly, not with an unhandled EPIPE. Any other
  // failure to write it (a full disk, a file size limit) is one line and exit 1, not a
  // stack trace; what the command changed stands, and a secret it printed may be lost.
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(process.exitCode ?? 0);
    process.stderr.write(`iplookup: cannot write the output: ${error.message}; what the command changed stands (a key or token made is listed by 'keys list' or 'admin list': rotate or revoke it if its secret was not shown)\n`);
    process.exit(1);
  });
  // Standard error is where a server logs: a log that cannot be written (its reader gone,
  // EPIPE; the descriptor closed, EBADF; a full disk) must not stop the server. Each log
  // write learns of its failure itself (its lines are counted dropped: see io.ts), and
  // there is nowhere left to tell of it: the stream's error is let go.
  process.stderr.on("error", () => {});
  const code = await runCli(process.argv.slice(2), {
    env: process.env,
    io: processIo,
    now: () => new Date(),
    defaultDataPath: defaults.dataPath,
    selfCommand: defaults.selfCommand,
    workerEntry: defaults.workerEntry,
  });
  process.exitCode = code;
  // A stopped server's last log lines, which a stalled reader may never take: they are
  // dropped (CONTRACT §12) rather than keep the process from exiting (§8).
  if (!(await stderrLog.settled(LOG_IDLE_MS, LOG_MAX_MS))) process.exit(code);
}

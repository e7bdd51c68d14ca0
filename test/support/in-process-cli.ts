import { runCli } from "../../src/cli/run.ts";

/**
 * Runs a command line in this process, with `env` as its whole environment (none by
 * default) and `defaultDataPath` as the default data file: its exit code and what it
 * printed. For tests whose CLI must reach something this process serves (a publisher on
 * loopback) or share its module state.
 */
export async function runCliInProcess(defaultDataPath: string, args: readonly string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await runCli([...args], {
    env,
    io: { out: (text) => void (stdout += `${text}\n`), err: (text) => void (stderr += `${text}\n`) },
    now: () => new Date(),
    defaultDataPath,
    selfCommand: ["iplookup"],
  });
  return { code, stdout, stderr };
}

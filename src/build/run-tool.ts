/** Runs a build tool (tar, dpkg-deb, …); throws with its stderr when it fails. */
export function runTool(command: readonly string[], options: { cwd?: string; env?: Record<string, string | undefined> } = {}): string {
  const result = Bun.spawnSync([...command], { cwd: options.cwd, env: options.env ?? process.env, stdout: "pipe", stderr: "pipe" });
  if (result.exitCode !== 0) {
    throw new Error(`${command.join(" ")} failed (exit ${result.exitCode}): ${result.stderr.toString().trim() || result.stdout.toString().trim()}`);
  }
  return result.stdout.toString();
}

/** Sets every path's time (links themselves included) to `epoch`, so archives do not depend on when files were written. */
export function clampTimes(dir: string, epoch: number): void {
  runTool(["find", dir, "-exec", "touch", "-h", "-d", `@${epoch}`, "{}", "+"]);
}

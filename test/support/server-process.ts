import { join } from "node:path";

const MAIN = join(import.meta.dir, "..", "..", "src", "main.ts");

/** A `iplookup serve` child process on a real socket. */
export interface ServerProcess {
  readonly url: string;
  readonly process: ReturnType<typeof Bun.spawn>;
  /** Everything written to stderr so far. */
  stderr(): string;
  /** Stops with a signal and waits for the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Runs the CLI as a separate process: `bun src/main.ts ARGS`, or the given command. A
 * command still running after a minute is killed (its code is then null): waiting for it
 * blocks the test's thread, where the test's own timeout cannot cut in.
 */
export function cli(args: string[], env: Record<string, string> = {}, command: string[] = [process.execPath, MAIN]) {
  const result = Bun.spawnSync([...command, ...args], { env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe", timeout: 60_000, killSignal: "SIGKILL" });
  return { code: result.exitCode, stdout: result.stdout.toString(), stderr: result.stderr.toString() };
}

/**
 * Starts `serve --port 0` and waits for its start-up line, which names the URL. The
 * process is killed if it has not announced itself within `timeoutMs`.
 */
export async function startServerProcess(
  args: string[],
  options: { env?: Record<string, string>; command?: string[]; timeoutMs?: number } = {},
): Promise<ServerProcess> {
  const command = options.command ?? [process.execPath, MAIN];
  const child = Bun.spawn([...command, "serve", "--host", "127.0.0.1", "--port", "0", "--workers", "1", ...args], {
    env: { ...process.env, ...options.env },
    stdout: "pipe",
    stderr: "pipe",
  });
  let stderr = "";
  const reader = (child.stderr as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  const deadline = Date.now() + (options.timeoutMs ?? 15_000);
  let url: string | undefined;
  while (!url) {
    const timer = new Promise<"timeout">((resolve) => setTimeout(() => resolve("timeout"), Math.max(0, deadline - Date.now())));
    const chunk = await Promise.race([reader.read(), timer]);
    if (chunk === "timeout" || chunk.done) {
      child.kill("SIGKILL");
      throw new Error(`the server did not start:\n${stderr}`);
    }
    stderr += decoder.decode(chunk.value, { stream: true });
    const match = /"listen":"([^"]+)"/.exec(stderr);
    if (match) url = (match[1] as string).replace(/\/$/, "");
  }
  // Keep draining stderr so the child never blocks on a full pipe.
  (async () => {
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) return;
      stderr += decoder.decode(chunk.value, { stream: true });
    }
  })();
  return {
    url,
    process: child,
    stderr: () => stderr,
    async stop(signal = "SIGTERM") {
      child.kill(signal);
      return await child.exited;
    },
  };
}

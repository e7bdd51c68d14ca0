import { readFileSync } from "node:fs";
import { PURGE_DELAY_VARIABLE, SERVE_PURGE_DELAY } from "../../src/cli/allocator-setting.ts";

/** Child processes for the benches: started pinned, read for their first JSON line, stopped. */
export interface BenchProcess {
  readonly info: Record<string, unknown>;
  readonly pid: number;
  rssMiB(): number;
  stop(): Promise<void>;
}

/**
 * Starts `command`; its stderr goes to the file `stderrPath` if given, else to this
 * process's stderr. It runs with the allocator setting `serve` gives itself (unless the
 * environment sets another), so that the reference servers' ratios to `serve` compare
 * the code, not the allocator.
 */
export async function startProcess(command: string[], env: Record<string, string> = {}, stderrPath?: string): Promise<BenchProcess> {
  const child = Bun.spawn(command, {
    stdout: "pipe",
    stderr: stderrPath ? Bun.file(stderrPath) : "inherit",
    env: { [PURGE_DELAY_VARIABLE]: SERVE_PURGE_DELAY, ...process.env, ...env },
  });
  const reader = (child.stdout as ReadableStream<Uint8Array>).getReader();
  let text = "";
  const deadline = Date.now() + 20_000;
  while (!text.includes("\n")) {
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`${command.join(" ")} did not start`);
    }
    const chunk = await reader.read();
    if (chunk.done) throw new Error(`${command.join(" ")} exited before starting`);
    text += new TextDecoder().decode(chunk.value);
  }
  reader.releaseLock();
  return {
    info: JSON.parse(text.slice(0, text.indexOf("\n"))) as Record<string, unknown>,
    pid: child.pid,
    rssMiB: () => rssMiB(child.pid),
    async stop() {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await child.exited;
      clearTimeout(timer);
    },
  };
}

/** Resident memory of a process, from /proc. */
export function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
  return kib / 1024;
}

/**
 * The main thread's time on a CPU so far, in nanoseconds (Linux, /proc/PID/schedstat).
 * The servers the benches start serve on their main thread (one worker); the process's
 * total would also count threads that come and go during a run (the collector's), and
 * lose the time of those that end before it is read.
 */
export function mainThreadCpuNs(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/schedstat`, "utf8").split(" ")[0]);
}

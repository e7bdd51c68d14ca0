import { join } from "node:path";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { rssMiB, type BenchProcess } from "./processes.ts";
import { pinned } from "./wrk.ts";

const MAIN = join(import.meta.dir, "..", "..", "src", "main.ts");

/**
 * `iplookup serve` as an operator runs it, at its default settings but one worker on
 * core `core`: the access log on (`--log-level info`), written to `logFile` as a
 * service manager would collect it; `data`: a data file other than the default one.
 * Creates an unlimited key in `state`; `info` carries
 * {key, port} like the other bench servers.
 */
export async function startServe(options: { state: string; logFile: string; logLevel?: "info" | "warn"; core: number; data?: string }): Promise<BenchProcess> {
  const store = SqliteStore.open(options.state);
  const { secret } = await store.createKey("bench", "unlimited");
  await store.close();
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  const child = Bun.spawn(
    pinned(options.core, [
      process.execPath, MAIN, "serve", "--host", "127.0.0.1", "--port", String(port), "--workers", "1", "--admin-port", "off",
      "--state", options.state, "--log-level", options.logLevel ?? "info",
      ...(options.data !== undefined ? ["--data", options.data] : []),
    ]),
    { stdout: "ignore", stderr: Bun.file(options.logFile) },
  );
  const deadline = Date.now() + 20_000;
  while ((await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.status, () => 0)) !== 200) {
    if (Date.now() > deadline || child.exitCode !== null) {
      child.kill("SIGKILL");
      throw new Error(`iplookup serve did not start (see ${options.logFile})`);
    }
    await Bun.sleep(50);
  }
  return {
    info: { key: secret, port },
    pid: child.pid,
    rssMiB: () => rssMiB(child.pid),
    async stop() {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 12_000);
      await child.exited;
      clearTimeout(timer);
    },
  };
}

import type { ServeConfig } from "../../config/serve-config.ts";
import type { CliContext } from "../command.ts";

/**
 * `serve --workers N`: N server processes on one port (SO_REUSEPORT, the kernel spreads
 * connections), sharing one state file. Quotas hold across them because every charge is
 * an IMMEDIATE transaction on that file. This process only supervises: it forwards
 * SIGTERM, SIGINT and SIGHUP, restarts a worker that dies, and exits 0 once every worker
 * has stopped cleanly. A worker refusing its configuration (exit 2) stops them all with
 * exit 2, and workers dying over and over stop them all with exit 1: no crash loop.
 */
const RESTARTS_ALLOWED = 5;
const RESTART_WINDOW_MS = 60_000;

export async function runWorkers(config: ServeConfig, argv: readonly string[], context: CliContext): Promise<number> {
  const port = config.port === 0 ? await freePort(config.host) : config.port;
  const args = [...context.selfCommand, "serve", ...withoutFlags(argv, ["workers", "port"]), "--workers", "1", "--port", String(port)];
  const env = { ...context.env, IPLOOKUP_WORKER_OF: String(process.pid) };
  let stopping = false;
  const workers = new Set<ReturnType<typeof Bun.spawn>>();
  let exitCode = 0;
  const restarts: number[] = [];
  const stopAll = (code: number) => {
    stopping = true;
    exitCode = Math.max(exitCode, code);
    for (const worker of workers) if (worker.exitCode === null) worker.kill("SIGTERM");
  };
  const log = (msg: string, fields: Record<string, unknown>) =>
    context.io.err(JSON.stringify({ time: context.now().toISOString(), level: "error", msg, ...fields }));

  const start = () => {
    const worker = Bun.spawn(args, { env, stdin: "ignore", stdout: "inherit", stderr: "inherit" });
    workers.add(worker);
    worker.exited.then((code) => {
      workers.delete(worker);
      if (stopping) {
        if (code !== 0) exitCode = Math.max(exitCode, 1);
        return;
      }
      if (code === 2) return stopAll(2);
      const now = Date.now();
      restarts.push(now);
      while ((restarts[0] as number) < now - RESTART_WINDOW_MS) restarts.shift();
      if (restarts.length > RESTARTS_ALLOWED) {
        log("workers keep exiting; stopping", { pid: worker.pid, code, restarts: restarts.length });
        return stopAll(1);
      }
      log("worker exited; starting another", { pid: worker.pid, code });
      setTimeout(() => stopping || start(), 500);
    });
  };
  for (let i = 0; i < config.workers; i++) start();

  const forward = (signal: NodeJS.Signals) => () => {
    if (signal !== "SIGHUP") stopping = true;
    for (const worker of workers) if (worker.exitCode === null) worker.kill(signal);
  };
  const onTerm = forward("SIGTERM");
  const onInt = forward("SIGINT");
  const onHup = forward("SIGHUP");
  process.on("SIGTERM", onTerm);
  process.on("SIGINT", onInt);
  process.on("SIGHUP", onHup);
  while (!stopping || workers.size > 0) await Bun.sleep(50);
  process.off("SIGTERM", onTerm);
  process.off("SIGINT", onInt);
  process.off("SIGHUP", onHup);
  return exitCode;
}

/** The arguments without the named flags (as `--flag value` or `--flag=value`). */
function withoutFlags(argv: readonly string[], names: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const name = names.find((n) => arg === `--${n}` || arg.startsWith(`--${n}=`));
    if (!name) out.push(arg);
    else if (arg === `--${name}`) i++;
  }
  return out;
}

async function freePort(host: string): Promise<number> {
  const probe = Bun.listen({ hostname: host, port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  return port;
}

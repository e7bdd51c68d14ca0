/** Running wrk, the HTTP load generator, and reading its figures. */

export interface WrkFigures {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  errors: number;
}

export function haveWrk(): boolean {
  return Bun.spawnSync(["sh", "-c", "command -v wrk"]).exitCode === 0;
}

export function haveTaskset(): boolean {
  return Bun.spawnSync(["sh", "-c", "command -v taskset"]).exitCode === 0;
}

/** A command pinned to one core when taskset is there. */
export function pinned(core: number, command: string[]): string[] {
  return haveTaskset() ? ["taskset", "-c", String(core), ...command] : command;
}

export function wrkScript(body: string, key: string): string {
  return [
    'wrk.method = "POST"',
    `wrk.body = [==[${body}]==]`,
    'wrk.headers["Content-Type"] = "application/json"',
    `wrk.headers["Authorization"] = "Bearer ${key}"`,
  ].join("\n");
}

function milliseconds(text: string): number {
  const match = /^([\d.]+)(us|ms|s)$/.exec(text.trim());
  if (!match) return Number.NaN;
  const value = Number(match[1]);
  return match[2] === "us" ? value / 1000 : match[2] === "ms" ? value : value * 1000;
}

/** One bounded wrk run against a loopback URL, on core `core`. */
export function runWrk(url: string, scriptPath: string, options: { seconds: number; connections: number; core: number }): WrkFigures {
  if (!/^http:\/\/127\.0\.0\.1:\d+\//.test(url)) throw new Error("the bench only loads loopback");
  const result = Bun.spawnSync(
    pinned(options.core, ["wrk", "-t1", `-c${options.connections}`, `-d${options.seconds}s`, "--timeout", "5s", "--latency", "-s", scriptPath, url]),
    { stdout: "pipe", stderr: "pipe" },
  );
  const out = result.stdout.toString();
  const number = (pattern: RegExp) => Number(pattern.exec(out)?.[1] ?? Number.NaN);
  return {
    requestsPerSecond: number(/Requests\/sec:\s+([\d.]+)/),
    p50Ms: milliseconds(/\s50%\s+(\S+)/.exec(out)?.[1] ?? ""),
    p99Ms: milliseconds(/\s99%\s+(\S+)/.exec(out)?.[1] ?? ""),
    requests: number(/(\d+) requests in/),
    errors: number(/Non-2xx or 3xx responses: (\d+)/) || 0,
  };
}

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { pairedRuns, scenarios, type Comparison } from "./http.ts";
import { startProcess, type BenchProcess } from "./processes.ts";
import { pinned, wrkScript } from "./wrk.ts";

const SERVER_CORE = 0;
const ORIGIN = "https://app.example.com";

/**
 * What a key's controls (CONTRACT §16) cost single lookups: one server (bench-server.ts,
 * the app alone, with or without its access log: see measureKeyControls), two keys on
 * the same unlimited plan, in alternation round by round. The subject key has every control: an expiry, an allowlist of 20 blocks whose
 * last one holds 127.0.0.1 (so the address check walks it all) and five origins, and
 * its requests send an allowed Origin (so their answers carry the CORS headers); the
 * reference key has none. Both send the same body and Origin.
 *
 * Besides requests a second, each run reads the CPU time of the server's main thread
 * (see pairedRuns in http.ts), where Bun parses requests, runs the app and writes answers, and
 * divides it by the requests answered: CPU a request (Comparison.cpu), which another
 * process taking turns on the core moves far less than the rate; its ratio is the
 * plain key's over the controlled key's (below 1: the controls cost that much more).
 */
export interface KeyControlsFigures extends Comparison {
  cpu: NonNullable<Comparison["cpu"]>;
}

/**
 * Paired rounds of single lookups on one server with two keys (subject first, then
 * reference), both sending the same body and an allowed Origin, each round one wrk run
 * of each: requests a second and the server's CPU a request, compared. The subject's
 * first request must be answered with CORS (for a key found in the store, that first
 * request is also what brings it into the server's key cache).
 */
async function pairedKeys(server: BenchProcess, work: string, keys: [string, string], options: { rounds: number; seconds: number; connections: number }): Promise<KeyControlsFigures> {
  const single = scenarios().find((scenario) => scenario.addresses === 1)!;
  const url = `http://127.0.0.1:${server.info.port}${single.path}`;
  const scripts = keys.map((key, i) => {
    const path = join(work, `key-${i}.lua`);
    writeFileSync(path, `${wrkScript(single.body, key)}\nwrk.headers["Origin"] = "${ORIGIN}"\n`);
    return path;
  });
  const first = await fetch(url, { method: "POST", headers: { authorization: `Bearer ${keys[0]}`, "content-type": "application/json", origin: ORIGIN }, body: single.body });
  if (first.status !== 200 || first.headers.get("access-control-allow-origin") !== ORIGIN) throw new Error(`the subject key was answered ${first.status}, or without CORS: ${await first.text()}`);
  const comparison = pairedRuns(single, { url, script: scripts[0]!, pid: server.pid }, { url, script: scripts[1]!, pid: server.pid }, options);
  const errors = comparison.subject.errors + comparison.reference.errors;
  if (errors > 0) throw new Error(`${errors} answers were not 200`);
  return { ...comparison, cpu: comparison.cpu! };
}

/**
 * The floor under the controls' cost: a bare Bun.serve (cors-bare-server.ts) answering a
 * single lookup's body and headers, with the three CORS headers against without, paired
 * as measureKeyControls pairs the keys. No check runs on either: what is measured is
 * what writing those headers costs on this runtime.
 */
export async function measureCorsFloor(options: { rounds: number; seconds: number; connections: number }): Promise<KeyControlsFigures> {
  const work = mkdtempSync(join(tmpdir(), "iplookup-bench-cors-"));
  const server = await startProcess(pinned(SERVER_CORE, [process.execPath, join(import.meta.dir, "cors-bare-server.ts"), "0"]));
  try {
    return await pairedKeys(server, work, ["cors", "plain"], options);
  } finally {
    await server.stop().catch(() => {});
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * With `accessLog`, the server writes serve's access log (level info, to a file), as
 * `serve` does by default: then every request's peer address is asked of the socket for
 * the log line anyway (0.7–1.3 µs), and the allowlist finds it there. Without (level
 * warn), the allowlist alone asks for it: the controls' worst case.
 */
export async function measureKeyControls(options: { rounds: number; seconds: number; connections: number; accessLog: boolean }): Promise<KeyControlsFigures> {
  const work = mkdtempSync(join(tmpdir(), "iplookup-bench-controls-"));
  const state = join(work, "state.db");
  const server = await startProcess(
    pinned(SERVER_CORE, [process.execPath, join(import.meta.dir, "bench-server.ts"), "0", state, options.accessLog ? "info" : "warn"]),
    {},
    join(work, "server.log"),
  );
  try {
    const plain = String(server.info.key);
    const store = SqliteStore.open(state);
    const cidrs = [...Array.from({ length: 19 }, (_, i) => `198.51.${i}.0/24`), "127.0.0.0/8"];
    const origins = ["https://a.example.com", "https://b.example.com", "https://c.example.com", "http://localhost:5173", ORIGIN];
    const { secret: controlled } = await store.createKey("controlled", "unlimited", {
      expiresAt: new Date(Date.now() + 365 * 86_400_000).toISOString(),
      allowedCidrs: cidrs,
      allowedOrigins: origins,
      metadata: { bench: true },
    });
    await store.close();
    return await pairedKeys(server, work, [controlled, plain], options);
  } finally {
    await server.stop().catch(() => {});
    rmSync(work, { recursive: true, force: true });
  }
}

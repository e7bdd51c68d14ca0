/**
 * CONTRACT §13: running out of descriptors. The soft limit is raised to the hard limit at
 * start (the runtime does it before the program runs); connections past the limit are
 * survived (the server answers again once they close), and /metrics shows descriptors
 * in use and the limit.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServerProcess, type ServerProcess } from "../support/server-process.ts";

const MAIN = join(import.meta.dir, "..", "..", "src", "main.ts");
const dir = mkdtempSync(join(tmpdir(), "iplookup-descriptors-"));
const servers: ServerProcess[] = [];
afterAll(async () => {
  for (const server of servers) await server.stop("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

/** `serve` under a shell that set the descriptor limits first. */
async function serveWithLimits(soft: number, hard: number, name: string) {
  const server = await startServerProcess(["--state", join(dir, `${name}.db`), "--admin-port", "off"], {
    command: ["bash", "-c", `ulimit -Sn ${soft} && ulimit -Hn ${hard} && exec "$0" "$@"`, process.execPath, MAIN],
  });
  servers.push(server);
  return server;
}

const softLimitOf = (pid: number) => Number(/^Max open files\s+(\d+)\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/limits`, "utf8"))?.[1]);

test("at start the soft limit is raised to the hard limit, and /metrics shows both the use and the limit", async () => {
  const server = await serveWithLimits(256, 4096, "raised");
  expect(softLimitOf(server.process.pid)).toBe(4096);
  const metrics = await (await fetch(`${server.url}/metrics`)).text();
  expect(metrics).toContain("process_max_fds 4096");
  const open = Number(/^process_open_fds (\d+)$/m.exec(metrics)?.[1]);
  expect(open).toBeGreaterThan(3);
  expect(open).toBeLessThan(4096);
});

test("more idle connections than descriptors: once they close, the server answers again", async () => {
  const server = await serveWithLimits(128, 128, "exhausted");
  const port = Number(new URL(server.url).port);
  const held = [];
  for (let i = 0; i < 300; i++) {
    held.push(await Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {}, error() {} } }));
  }
  // The kernel queued them all; the server had descriptors for some.
  for (const socket of held) socket.end();
  const deadline = Date.now() + 20_000;
  let status = 0;
  while (Date.now() < deadline) {
    try {
      status = (await fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(1000) })).status;
      if (status === 200) break;
    } catch {
      // not yet
    }
    await Bun.sleep(100);
  }
  expect(status).toBe(200);
  const metrics = await (await fetch(`${server.url}/metrics`)).text();
  expect(metrics).toContain("process_max_fds 128");
});

test("a reload while connections hold every descriptor fails with a log line and is tried again once they close; the server lives on", async () => {
  const server = await serveWithLimits(96, 96, "reload-at-limit");
  const port = Number(new URL(server.url).port);
  const held = [];
  for (let i = 0; i < 150; i++) {
    held.push(await Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {}, error() {} } }));
  }
  // Idle connections the server accepts until it has no descriptor left (it takes a moment).
  const full = Date.now() + 10_000;
  while (readdirSync(`/proc/${server.process.pid}/fd`).length < 96 && Date.now() < full) await Bun.sleep(50);
  server.process.kill("SIGHUP");
  expect(await waitForLog(server, /"data reload failed; still serving the data loaded before".*too few file descriptors/)).toBe(true);
  expect(server.process.exitCode).toBeNull();
  for (const socket of held) socket.end();
  // The reload that could not start is tried again by itself, not on the next SIGHUP.
  expect(await waitForLog(server, /"data reloaded"/)).toBe(true);
  expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  expect(server.process.exitCode).toBeNull();
}, 40_000);

async function waitForLog(server: ServerProcess, line: RegExp, ms = 15_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (line.test(server.stderr())) return true;
    if (server.process.exitCode !== null) return false;
    await Bun.sleep(100);
  }
  return false;
}

/**
 * CONTRACT §8: a server never shares its port with another. A server claims its port
 * (binds it alone for a moment) in the turn it starts listening, once its state store
 * is open and its keys are loaded, and not before: while it waits for its store (here:
 * PostgreSQL reached through a proxy that holds the first server's connection) nothing
 * listens (a connection is refused, not taken and dropped), a second iplookup may take
 * the port, and the first is then refused it rather than sharing it. Skipped when
 * PostgreSQL cannot be reached.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { postgresAvailable, testStates } from "../support/postgres.ts";
import { freePort, listening } from "../support/ports.ts";
import { startServerProcess } from "../support/server-process.ts";
import { startTcpProxy, type TcpProxy } from "../support/tcp-proxy.ts";

const states = testStates();
const dir = mkdtempSync(join(tmpdir(), "iplookup-port-claim-"));
const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  rmSync(dir, { recursive: true, force: true });
});

const MAIN = join(import.meta.dir, "..", "..", "src", "main.ts");

describe.skipIf(!postgresAvailable)("the port while a server starts", () => {
  test("a server waiting for its store does not listen yet; a second one started meanwhile takes the port, and the first is refused it, never sharing it", async () => {
    const direct = new URL(await states.freshDatabase());
    const proxy: TcpProxy = await startTcpProxy({ hostname: direct.hostname, port: Number(direct.port || 5432) });
    cleanups.push(() => proxy.close());
    const through = new URL(direct.href);
    through.port = String(proxy.port);
    const port = freePort();

    // The first server's first connection to the database is held: it waits for its store.
    const held = proxy.stallWhenSent("iplookup");
    const first = Bun.spawn([process.execPath, MAIN, "serve", "--host", "127.0.0.1", "--port", String(port), "--admin-port", "off", "--workers", "1", "--state", through.href], { stdout: "pipe", stderr: "pipe" });
    cleanups.push(() => first.kill("SIGKILL"));
    await held;
    // Nothing listens on the port yet: a client is refused, as before any server started.
    expect(await listening(port)).toBe(false);

    const second = await startServerProcess(["--port", String(port), "--admin-port", "off", "--state", join(dir, "second.db")]);
    cleanups.push(() => second.stop("SIGKILL"));
    expect(new URL(second.url).port).toBe(String(port));

    proxy.restore();
    expect(await first.exited).toBe(1);
    expect(await new Response(first.stderr).text()).toContain(`cannot listen on 127.0.0.1:${port}: the port is in use`);
    // The port is the second server's alone: every connection reaches it.
    const pids = new Set<string>();
    for (let i = 0; i < 20; i++) pids.add((await fetch(`${second.url}/healthz`, { headers: { connection: "close" } })).headers.get("x-request-id")!.split("-")[0]!);
    expect(pids.size).toBe(1);
    expect(second.process.exitCode).toBeNull();
  }, 60_000);
});

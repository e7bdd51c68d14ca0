/**
 * CONTRACT §8: a server never shares its port with another. A server claims its port
 * before it opens its state store and loads its keys, and holds it until its own
 * listeners are bound: a second iplookup started meanwhile on the same port is refused,
 * however long the first takes (here: PostgreSQL reached through a proxy that holds the
 * first server's connection). Skipped when PostgreSQL cannot be reached.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { postgresAvailable, testStates } from "../support/postgres.ts";
import { cli, startServerProcess, type ServerProcess } from "../support/server-process.ts";
import { startTcpProxy, type TcpProxy } from "../support/tcp-proxy.ts";

const states = testStates();
const dir = mkdtempSync(join(tmpdir(), "iplookup-port-claim-"));
const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  rmSync(dir, { recursive: true, force: true });
});

/** A port nothing listens on now. */
function freePort(): number {
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  return port;
}

describe.skipIf(!postgresAvailable)("the port while a server starts", () => {
  test("a second server started while the first waits for its store is refused; the first then serves alone", async () => {
    const direct = new URL(await states.freshDatabase());
    const proxy: TcpProxy = await startTcpProxy({ hostname: direct.hostname, port: Number(direct.port || 5432) });
    cleanups.push(() => proxy.close());
    const through = new URL(direct.href);
    through.port = String(proxy.port);
    const port = freePort();

    // The first server's first connection to the database is held: it has claimed its port and waits.
    const held = proxy.stallWhenSent("iplookup");
    const first = startServerProcess(["--state", through.href, "--port", String(port), "--admin-port", "off"], { timeoutMs: 30_000 });
    first.then((server) => cleanups.push(() => server.stop("SIGKILL")), () => {});
    await held;

    const second = cli(["serve", "--host", "127.0.0.1", "--port", String(port), "--admin-port", "off", "--workers", "1", "--state", join(dir, "second.db")]);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`cannot listen on 127.0.0.1:${port}: the port is in use`);

    proxy.restore();
    const server: ServerProcess = await first;
    expect(new URL(server.url).port).toBe(String(port));
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  }, 60_000);
});

import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startAdminListener } from "../../src/admin/admin-listener.ts";
import { createLogger } from "../../src/log/logger.ts";
import { loadTlsPair, type TlsPair } from "../../src/serve/tls.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { selfSignedCertificate } from "../support/certificate.ts";
import { defaultIndex } from "../support/default-data.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-admin-listener-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A self-signed certificate for 127.0.0.1 whose subject names `label`, loaded as serve loads one. */
function certificate(label: string): TlsPair {
  const { cert, key } = selfSignedCertificate(dir, label);
  return loadTlsPair({ certPath: cert, keyPath: key });
}

async function servedSubject(port: string): Promise<string> {
  const client = Bun.spawn(["openssl", "s_client", "-connect", `127.0.0.1:${port}`], { stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  client.stdin.end();
  const out = await new Response(client.stdout).text();
  await client.exited;
  return /subject=.*CN\s*=\s*([\w-]+)/.exec(out)?.[1] ?? "none";
}

test("with TLS the admin listener serves HTTPS; a renewed certificate is taken with no failed request; a port in use is refused", async () => {
  const state = join(dir, "state.db");
  const store = SqliteStore.open(state);
  const { secret } = await store.createAdminToken("ops");
  await store.close();
  const index = defaultIndex();
  const listener = await startAdminListener({
    host: "127.0.0.1",
    port: 0,
    statePath: state,
    logger: createLogger("silent", () => {}),
    now: () => new Date(),
    version: "t",
    workers: 1,
    dataInfo: () => index.info,
    tls: certificate("first-admin"),
  });
  try {
    expect(listener.url.protocol).toBe("https:");
    const port = listener.url.port;
    const get = () => fetch(`https://127.0.0.1:${port}/admin/v1/plans`, { headers: { authorization: `Bearer ${secret}` }, tls: { rejectUnauthorized: false } });
    expect((await get()).status).toBe(200);
    expect(await servedSubject(port)).toBe("first-admin");

    // Requests keep coming while the certificate changes: none fails.
    let stop = false;
    const statuses: number[] = [];
    const load = (async () => {
      while (!stop) statuses.push(await get().then((response) => response.status, () => 0));
    })();
    await Bun.sleep(100);
    listener.relisten(certificate("second-admin"));
    await Bun.sleep(200);
    stop = true;
    await load;
    expect(statuses.length).toBeGreaterThan(5);
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    expect(await servedSubject(port)).toBe("second-admin");

    // The port stays claimed: another listener cannot share it.
    await expect(
      startAdminListener({ host: "127.0.0.1", port: Number(port), statePath: state, logger: createLogger("silent", () => {}), now: () => new Date(), version: "t", workers: 1, dataInfo: () => index.info }),
    ).rejects.toThrow(/in use.*--admin-port/);
  } finally {
    await listener.stop();
  }
});

/**
 * A client in a process of its own: opens `count` TLS connections to `port` (their TCP
 * handshakes done by the kernel and their ClientHello sent, whether or not the listener
 * has accepted them), then writes `ready`, then sends a request on each and prints the
 * status line it got, or the error.
 */
const QUEUED_CLIENT = `
import tls from "node:tls";
import { writeFileSync } from "node:fs";
const [port, count, ready] = process.argv.slice(-3);
const results = Array.from({ length: Number(count) }, () => new Promise((resolve) => {
  const socket = tls.connect({ host: "127.0.0.1", port: Number(port), rejectUnauthorized: false });
  socket.setTimeout(10000, () => socket.destroy(new Error("timed out")));
  socket.on("secureConnect", () => socket.write("GET /console HTTP/1.1\\r\\nHost: admin\\r\\nConnection: close\\r\\n\\r\\n"));
  let answer = "";
  socket.on("data", (data) => (answer += data));
  socket.on("end", () => resolve(answer.split("\\r\\n")[0]));
  socket.on("error", (error) => resolve("error " + (error.code ?? error.message)));
}));
await Bun.sleep(300);
writeFileSync(ready, "");
console.log(JSON.stringify(await Promise.all(results)));
`;

test("connections waiting in the admin listener's accept queue when the certificate is renewed are answered, not reset", async () => {
  const state = join(dir, "queued.db");
  SqliteStore.open(state).close();
  const listener = await startAdminListener({ host: "127.0.0.1", port: 0, statePath: state, logger: createLogger("silent", () => {}), now: () => new Date(), version: "t", workers: 1, dataInfo: () => defaultIndex().info, tls: certificate("queued-first") });
  const renewed = certificate("queued-second");
  const ready = join(dir, "queued.ready");
  try {
    const client = Bun.spawn([process.execPath, "-e", QUEUED_CLIENT, listener.url.port, "8", ready], { stdout: "pipe", stderr: "inherit" });
    // This thread's event loop does not run until the relisten: the listener accepts
    // nothing, so the client's connections wait in its socket's accept queue, as they do
    // when a reload keeps the thread busy under a stream of new connections.
    const deadline = Date.now() + 10_000;
    while (!existsSync(ready) && Date.now() < deadline) Bun.sleepSync(5);
    expect(existsSync(ready)).toBe(true);
    listener.relisten(renewed);
    const statuses = JSON.parse(await new Response(client.stdout).text()) as string[];
    expect(await client.exited).toBe(0);
    expect(statuses).toEqual(Array.from({ length: 8 }, () => "HTTP/1.1 200 OK"));
  } finally {
    await listener.stop();
  }
}, 30_000);

test("serve --tls-cert --tls-key: the admin listener speaks HTTPS too, and SIGHUP renews its certificate", async () => {
  const { startServerProcess } = await import("../support/server-process.ts");
  const { writeFileSync } = await import("node:fs");
  const state = join(dir, "served.db");
  const store = SqliteStore.open(state);
  const { secret } = await store.createAdminToken("ops");
  await store.close();
  const certPath = join(dir, "live.crt");
  const keyPath = join(dir, "live.key");
  const first = certificate("served-first");
  writeFileSync(certPath, first.cert);
  writeFileSync(keyPath, first.key);
  const server = await startServerProcess(["--state", state, "--workers", "2", "--admin-port", "0", "--tls-cert", certPath, "--tls-key", keyPath, "--log-level", "warn"]);
  try {
    const admin = /"admin":"([^"]+)"/.exec(server.stderr())![1]!;
    expect(admin).toStartWith("https://127.0.0.1:");
    const port = new URL(admin).port;
    const status = await fetch(`${admin}admin/v1/status`, { headers: { authorization: `Bearer ${secret}` }, tls: { rejectUnauthorized: false } });
    expect(status.status).toBe(200);
    expect((await fetch(`${admin}console`, { tls: { rejectUnauthorized: false } })).status).toBe(200);
    expect(await servedSubject(port)).toBe("served-first");
    const second = certificate("served-second");
    writeFileSync(certPath, second.cert);
    writeFileSync(keyPath, second.key);
    server.process.kill("SIGHUP");
    const deadline = Date.now() + 3000;
    while ((await servedSubject(port)) !== "served-second" && Date.now() < deadline) await Bun.sleep(100);
    expect(await servedSubject(port)).toBe("served-second");
  } finally {
    expect(await server.stop()).toBe(0);
  }
}, 30_000);

test("every answer of the admin listener says X-Content-Type-Options: nosniff: JSON, problem+json, the OpenAPI document, the console's files", async () => {
  const state = join(dir, "nosniff.db");
  const store = SqliteStore.open(state);
  const writer = await store.createAdminToken("ops");
  const reader = await store.createReadOnlyAdminToken("auditor");
  await store.close();
  const index = defaultIndex();
  const listener = await startAdminListener({ host: "127.0.0.1", port: 0, statePath: state, logger: createLogger("silent", () => {}), now: () => new Date(), version: "t", workers: 1, dataInfo: () => index.info });
  try {
    const base = listener.url.href.replace(/\/$/, "");
    const ask = (method: string, path: string, bearer: string | null, body?: string) =>
      fetch(`${base}${path}`, { method, body, headers: { ...(bearer ? { authorization: `Bearer ${bearer}` } : {}), ...(body === undefined ? {} : { "content-type": "application/json" }) } });
    for (const [method, path, bearer, body, status] of [
      ["GET", "/admin/v1/plans", writer.secret, undefined, 200],
      ["HEAD", "/admin/v1/plans", writer.secret, undefined, 200],
      ["POST", "/admin/v1/keys", writer.secret, '{"name":"k"}', 201],
      ["GET", "/admin/v1/plans", null, undefined, 401],
      ["POST", "/admin/v1/keys", reader.secret, '{"name":"k"}', 403],
      ["POST", "/admin/v1/keys", writer.secret, '{"name":', 400],
      ["GET", "/admin/v1/nowhere", writer.secret, undefined, 404],
      ["DELETE", "/admin/v1/keys", writer.secret, undefined, 405],
      ["GET", "/admin/openapi.json", null, undefined, 200],
      ["GET", "/console", null, undefined, 200],
      ["GET", "/console/console.js", null, undefined, 200],
    ] as const) {
      const response = await ask(method, path, bearer, body);
      await response.arrayBuffer();
      expect({ method, path, status: response.status, sniff: response.headers.get("x-content-type-options") }).toEqual({ method, path, status, sniff: "nosniff" });
    }
  } finally {
    await listener.stop();
  }
});

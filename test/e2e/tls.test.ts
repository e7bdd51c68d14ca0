/**
 * HTTPS (CONTRACT §12): `--tls-cert` and `--tls-key` serve HTTPS; SIGHUP reads them again
 * (a renewed certificate needs no restart, no request in flight fails); a broken pair is
 * refused with a log line and the old one kept; at start, a broken pair is a bad value.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { copyFileSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { datedCertificate, selfSignedCertificate } from "../support/certificate.ts";
import { cli, startServerProcess, type ServerProcess } from "../support/server-process.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-tls-"));
const servers: ServerProcess[] = [];
afterAll(async () => {
  await Promise.all(servers.map((server) => server.stop("SIGKILL")));
  rmSync(dir, { recursive: true, force: true });
});

/** A self-signed certificate for localhost whose subject names `label`. */
const makeCertificate = (label: string) => selfSignedCertificate(dir, label, "DNS:localhost,IP:127.0.0.1");

/** The subject of the certificate a new connection to the port is served. */
async function servedSubject(port: string): Promise<string> {
  const client = Bun.spawn(["openssl", "s_client", "-connect", `127.0.0.1:${port}`, "-servername", "localhost"], { stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  client.stdin.end();
  const out = await new Response(client.stdout).text();
  await client.exited;
  return /subject=.*CN\s*=\s*([\w-]+)/.exec(out)?.[1] ?? "none";
}

/**
 * `serve` with `workers` threads and the first certificate, copied to `NAME.crt` and
 * `NAME.key` (the files a renewal replaces), its log at warn.
 */
async function serveWithCertificate(name: string, state: string, workers: string) {
  const certPath = join(dir, `${name}.crt`);
  const keyPath = join(dir, `${name}.key`);
  copyFileSync(first.cert, certPath);
  copyFileSync(first.key, keyPath);
  const server = await startServerProcess(["--state", state, "--workers", workers, "--tls-cert", certPath, "--tls-key", keyPath, "--log-level", "warn"]);
  servers.push(server);
  return { server, certPath, keyPath, port: new URL(server.url).port };
}

let first: { cert: string; key: string };
let second: { cert: string; key: string };
beforeAll(() => {
  first = makeCertificate("first-cert");
  second = makeCertificate("second-cert");
});

test("HTTPS on the public port; SIGHUP takes a renewed certificate with no failed request; a broken one is refused and the old kept", async () => {
  const state = join(dir, "state.db");
  const store = SqliteStore.open(state);
  const { secret } = await store.createKey("tls", "unlimited");
  await store.close();
  const { server, certPath, keyPath, port } = await serveWithCertificate("live", state, "2");
  expect(server.url).toStartWith("https://");
  const lookup = () =>
    fetch(`${server.url}/v1/lookup`, {
      method: "POST",
      headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
      body: '{"ip":"1.1.1.1"}',
      tls: { rejectUnauthorized: false },
    });
  expect((await lookup()).status).toBe(200);
  expect(await servedSubject(port)).toBe("first-cert");

  let stop = false;
  let answered = 0;
  let failed = 0;
  const load = async () => {
    while (!stop) {
      try {
        if ((await lookup()).status === 200) answered++;
        else failed++;
      } catch {
        failed++;
      }
    }
  };
  const loaders = Array.from({ length: 6 }, load);
  try {
    await Bun.sleep(200);
    // A renewal as certbot does it: new files renamed over the old, then a reload.
    copyFileSync(second.cert, `${certPath}.new`);
    copyFileSync(second.key, `${keyPath}.new`);
    renameSync(`${certPath}.new`, certPath);
    renameSync(`${keyPath}.new`, keyPath);
    server.process.kill("SIGHUP");
    const deadline = Date.now() + 5000;
    while ((await servedSubject(port)) !== "second-cert" && Date.now() < deadline) await Bun.sleep(100);
    // The replaced listeners serve their connections for a second more, then leave:
    // from then on every new connection gets the renewed certificate.
    await Bun.sleep(1500);
    expect(await Promise.all(Array.from({ length: 6 }, () => servedSubject(port)))).toEqual(Array(6).fill("second-cert"));
  } finally {
    stop = true;
    await Promise.all(loaders);
  }
  expect(answered).toBeGreaterThan(20);
  expect(failed).toBe(0);

  writeFileSync(certPath, "not a certificate");
  server.process.kill("SIGHUP");
  const deadline = Date.now() + 5000;
  while (!server.stderr().includes("tls reload failed") && Date.now() < deadline) await Bun.sleep(50);
  expect(server.stderr()).toContain("tls reload failed; still serving the certificate loaded before");
  expect(await servedSubject(port)).toBe("second-cert");
  expect((await lookup()).status).toBe(200);
  expect(await server.stop("SIGTERM")).toBe(0);
}, 30_000);

test("at start, a missing half or a broken pair is a bad value: exit 2 with the reason", () => {
  const state = join(dir, "refused.db");
  const half = cli(["serve", "--port", "0", "--state", state, "--tls-cert", first.cert]);
  expect(half.code).toBe(2);
  expect(half.stderr).toContain("--tls-cert and --tls-key go together");
  const mismatched = cli(["serve", "--port", "0", "--admin-port", "off", "--state", state, "--tls-cert", first.cert, "--tls-key", second.key]);
  expect(mismatched.code).toBe(2);
  expect(mismatched.stderr).toContain("are not a usable pair");
});

test("a certificate out of its dates is refused like a broken pair: at start exit 2 naming its dates, on SIGHUP the one served kept; /metrics tells when the one served expires", async () => {
  const expired = datedCertificate(dir, "expired-cert", "20200101000000Z", "20200201000000Z");
  const early = datedCertificate(dir, "early-cert", "20990101000000Z", "20990201000000Z");
  const state = join(dir, "dated.db");
  const refusedExpired = cli(["serve", "--port", "0", "--admin-port", "off", "--state", state, "--tls-cert", expired.cert, "--tls-key", expired.key]);
  expect(refusedExpired.code).toBe(2);
  expect(refusedExpired.stderr).toContain(`the TLS certificate ${expired.cert} expired at 2020-02-01T00:00:00Z (this host's clock reads `);
  const refusedEarly = cli(["serve", "--port", "0", "--admin-port", "off", "--state", state, "--tls-cert", early.cert, "--tls-key", early.key]);
  expect(refusedEarly.code).toBe(2);
  expect(refusedEarly.stderr).toContain(`the TLS certificate ${early.cert} is not valid before 2099-01-01T00:00:00Z`);

  const { server, certPath, keyPath, port } = await serveWithCertificate("dated-live", state, "1");
  const metrics = async () => (await fetch(`${server.url}/metrics`, { tls: { rejectUnauthorized: false } })).text();
  const expiry = (text: string) => Number(/^iplookup_tls_certificate_expiry_timestamp_seconds (\d+)$/m.exec(text)?.[1]);
  const notAfter = (path: string) => Math.floor(new (require("node:crypto").X509Certificate)(require("node:fs").readFileSync(path)).validToDate.getTime() / 1000);
  expect(expiry(await metrics())).toBe(notAfter(first.cert));

  // A botched renewal: the files replaced by a pair whose certificate has expired.
  copyFileSync(expired.cert, certPath);
  copyFileSync(expired.key, keyPath);
  server.process.kill("SIGHUP");
  const deadline = Date.now() + 5000;
  while (!server.stderr().includes("tls reload failed") && Date.now() < deadline) await Bun.sleep(50);
  expect(server.stderr()).toContain("tls reload failed; still serving the certificate loaded before");
  expect(server.stderr()).toContain("expired at 2020-02-01T00:00:00Z");
  await Bun.sleep(1200);
  expect(await servedSubject(port)).toBe("first-cert");
  expect(expiry(await metrics())).toBe(notAfter(first.cert));

  copyFileSync(second.cert, certPath);
  copyFileSync(second.key, keyPath);
  server.process.kill("SIGHUP");
  const renewed = Date.now() + 5000;
  while ((await servedSubject(port)) !== "second-cert" && Date.now() < renewed) await Bun.sleep(100);
  // The replaced listener answers its connections for a second more, then leaves.
  await Bun.sleep(1500);
  expect(await servedSubject(port)).toBe("second-cert");
  expect(expiry(await metrics())).toBe(notAfter(second.cert));
  expect(await server.stop("SIGTERM")).toBe(0);
}, 60_000);

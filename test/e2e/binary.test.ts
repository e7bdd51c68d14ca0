import { afterAll, beforeAll, expect, test } from "bun:test";
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PURGE_DELAY_VARIABLE, SERVE_PURGE_DELAY } from "../../src/cli/allocator-setting.ts";
import { hostingBy, NO_SIGNAL_SOURCE } from "../support/privacy.ts";
import { startServerProcess, type ServerProcess } from "../support/server-process.ts";

const root = join(import.meta.dir, "..", "..");
const dir = mkdtempSync(join(tmpdir(), "iplookup-binary-"));
const binary = join(dir, "iplookup");
let server: ServerProcess | undefined;

/** A machine without Bun or the project: only the binary, an empty HOME, and a PATH with nothing on it. */
const bareEnv = { HOME: dir, PATH: join(dir, "empty-path") };

function run(args: string[]) {
  const result = Bun.spawnSync([binary, ...args], { cwd: dir, env: bareEnv, stdout: "pipe", stderr: "pipe" });
  return { code: result.exitCode, stdout: result.stdout.toString(), stderr: result.stderr.toString() };
}

beforeAll(() => {
  const built = Bun.spawnSync([process.execPath, join(root, "src", "build", "compile.ts"), join(dir, "build", "iplookup")], { stdout: "pipe", stderr: "pipe" });
  if (built.exitCode !== 0) throw new Error(built.stderr.toString());
  copyFileSync(join(dir, "build", "iplookup"), binary);
  rmSync(join(dir, "build"), { recursive: true });
}, 120_000);

afterAll(async () => {
  await server?.stop("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

test("the binary alone serves, manages keys and looks addresses up", async () => {
  const version = run(["--version"]);
  expect(version.code).toBe(0);
  expect(version.stdout).toMatch(/^iplookup \d+\.\d+\.\d+\nbuilt: \d{4}-\d\d-\d\dT/);
  expect(version.stdout).toContain("@ip-location-db/asn 2.3.2026061719");
  expect(run(["serve", "--help"]).stdout).toContain("Usage: iplookup serve");

  const offline = run(["lookup", "1.1.1.1"]);
  expect(JSON.parse(offline.stdout)).toMatchObject({ asn: 13335, country_code: "AU" });
  // Hints name the binary as it is run, and its data as embedded, not by an internal path.
  expect(run(["keys", "list"])).toMatchObject({ code: 1, stderr: expect.stringContaining("(a new state file is made by 'iplookup keys create --name NAME')") });
  expect(run(["data", "info"]).stdout).toContain("Data file: embedded in the binary\n");
  expect(JSON.parse(run(["data", "info", "--json"]).stdout)).toMatchObject({ path: null, embedded: true, data_version: expect.any(String) });

  // The start-up line (which names the URL) is written at every level but silent.
  server = await startServerProcess(["--log-level", "warn"], { command: [binary], env: bareEnv });
  expect(server.stderr()).toContain(join(dir, ".local", "state", "iplookup", "state.db"));
  // serve ran itself again with its allocator setting (see allocator-setting.ts).
  expect(readFileSync(`/proc/${server.process.pid}/environ`, "utf8").split("\0")).toContain(`${PURGE_DELAY_VARIABLE}=${SERVE_PURGE_DELAY}`);
  const created = run(["keys", "create", "--name", "vm", "--json"]);
  expect(created.code).toBe(0);
  const { key } = JSON.parse(created.stdout) as { key: string };
  await Bun.sleep(600);
  const batch = await fetch(`${server.url}/v1/lookup/batch`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ ips: ["1.1.1.1", "2606:4700:4700::1111"] }),
  });
  expect(batch.status).toBe(200);
  const { results } = (await batch.json()) as { results: Array<Record<string, unknown>> };
  expect(results[0]).toMatchObject({ ip: "1.1.1.1", asn: 13335, country_code: "AU" });
  expect(results[1]).toMatchObject({ ip: "2606:4700:4700::1111", asn: 13335 });
  expect(await server.stop("SIGTERM")).toBe(0);
  server = undefined;
}, 60_000);

test("the binary builds the AS index and reloads its embedded data on a loader thread (its worker module is in the binary)", async () => {
  server = await startServerProcess(["--log-level", "info", "--state", join(dir, "loader-state.db")], { command: [binary], env: bareEnv });
  const created = run(["keys", "create", "--name", "loader", "--state", join(dir, "loader-state.db"), "--json"]);
  expect(created.code).toBe(0);
  const { key } = JSON.parse(created.stdout) as { key: string };
  const asn = async () => {
    const response = await fetch(`${server!.url}/v1/asn/13335`, { headers: { authorization: `Bearer ${key}` } });
    expect(response.status).toBe(200);
    return (await response.json()) as { found: boolean; prefixes: string[] };
  };
  expect((await asn()).prefixes).toContain("1.1.1.0/24");
  server.process.kill("SIGHUP");
  for (let i = 0; i < 100 && !/"msg":"data reloaded".*\n/.test(server.stderr()); i++) await Bun.sleep(100);
  expect(server.stderr()).toContain('"msg":"data reloaded"');
  expect(server.stderr()).not.toContain("data reload failed");
  // The reload line names the data as the start-up line does, not by its path inside the binary.
  const lines = server.stderr().split("\n").slice(0, -1).map((line) => JSON.parse(line) as { msg: string; data?: string });
  const started = lines.find((line) => line.msg === "iplookup serving");
  const reloaded = lines.find((line) => line.msg === "data reloaded");
  expect(started?.data).toMatch(/^embedded \(@ip-location-db\//);
  expect(reloaded?.data).toBe(started!.data!);
  expect(server.stderr()).not.toContain("could not be built on a thread of its own");
  expect((await asn()).prefixes).toContain("1.1.1.0/24");
  expect(await server.stop("SIGTERM")).toBe(0);
  server = undefined;
}, 60_000);

test("the binary imports an MMDB file into a data file of its own and answers from it", () => {
  const mmdb = join(dir, "country.mmdb");
  copyFileSync(join(root, "node_modules", "@ip-location-db", "geo-whois-asn-country-mmdb", "geo-whois-asn-country.mmdb"), mmdb);
  const refused = run(["data", "import", mmdb]);
  expect(refused.code).toBe(2);
  expect(refused.stderr).toContain("embedded in the binary cannot be replaced");

  const data = join(dir, "imported.db");
  const imported = run(["data", "import", "--data", data, "--license", "CC0", mmdb]);
  expect(imported.stderr).toContain("merged:");
  expect(imported.code).toBe(0);
  const offline = run(["lookup", "--data", data, "1.1.1.1"]);
  expect(JSON.parse(offline.stdout)).toEqual({ ip: "1.1.1.1", version: 4, found: true, network: "1.1.1.0/24", asn: null, as_name: null, country_code: "AU", country: "Australia", privacy: NO_SIGNAL_SOURCE });
  expect(JSON.parse(run(["data", "info", "--json", "--data", data]).stdout).sources[0]).toMatchObject({ format: "mmdb", license: "CC0" });

  // In front of the data embedded in the binary.
  const combined = join(dir, "combined.db");
  expect(run(["data", "import", "--data", combined, "--with-default", mmdb]).code).toBe(0);
  // The embedded data's hosting list comes along.
  expect(JSON.parse(run(["lookup", "--data", combined, "1.1.1.1"]).stdout)).toMatchObject({ asn: 13335, as_name: "Cloudflare, Inc.", country_code: "AU", privacy: hostingBy("Cloudflare") });
  expect(JSON.parse(run(["data", "info", "--json", "--data", combined]).stdout).sources.map((source: { license: string }) => source.license)).toEqual([
    "not stated",
    "CC BY 4.0",
    "CC0",
    "MIT (part of iplookup)",
  ]);
});

test("the binary serves the admin API and the console from its embedded files, its script the same bundle as from source", async () => {
  const state = join(dir, "admin.db");
  const created = run(["admin", "create", "--name", "ops", "--json", "--state", state]);
  expect(created.code).toBe(0);
  const { token } = JSON.parse(created.stdout) as { token: string };
  server = await startServerProcess(["--state", state, "--admin-port", "0"], { command: [binary], env: bareEnv });
  const admin = /"admin":"([^"]+)"/.exec(server.stderr())![1]!;
  const page = await fetch(`${admin}console`);
  expect(page.status).toBe(200);
  expect(await page.text()).toContain('<script src="/console/console.js"');
  const { SCRIPT, STYLE, ICON } = await import("../../src/admin/console-bundle.ts");
  expect(await (await fetch(`${admin}console/console.js`)).text()).toBe(SCRIPT);
  expect(await (await fetch(`${admin}console/console.css`)).text()).toBe(STYLE);
  expect(await (await fetch(`${admin}console/favicon.svg`)).text()).toBe(ICON);
  expect(SCRIPT).toContain("u-legend");
  const status = await fetch(`${admin}admin/v1/status`, { headers: { authorization: `Bearer ${token}` } });
  expect(((await status.json()) as { version: string }).version).toMatch(/^\d+\.\d+\.\d+$/);
  expect(await server.stop("SIGTERM")).toBe(0);
  server = undefined;
}, 60_000);

test("the binary updates a data file of its own in the background, starting itself for it; its embedded data cannot be updated", async () => {
  const refused = run(["serve", "--port", "0", "--update-every", "1h"]);
  expect(refused.code).toBe(2);
  expect(refused.stderr).toContain("--update-every: the data embedded in the binary cannot be updated");
  expect(run(["data", "update"]).code).toBe(2);

  // A compressed file: the binary carries the unpackers.
  const gz = join(dir, "asn-ipv4.csv.gz");
  await Bun.write(gz, Bun.gzipSync(new TextEncoder().encode("1.0.0.0,1.0.0.255,13335,Cloudflare\n")));
  const data = join(dir, "updated.db");
  expect(run(["data", "import", "--data", data, gz]).code).toBe(0);
  server = await startServerProcess(["--data", data, "--state", join(dir, "update-state.db"), "--update-every", "1s"], { command: [binary], env: bareEnv });
  let succeeded = false;
  for (let i = 0; i < 100 && !succeeded; i++) {
    await Bun.sleep(100);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    succeeded = /^iplookup_data_update_last_success_timestamp_seconds [1-9]/m.test(metrics);
  }
  expect(succeeded).toBe(true);
  expect(server.stderr()).toContain('"msg":"data update: no source changed"');
  expect(await server.stop("SIGTERM")).toBe(0);
  server = undefined;
}, 60_000);

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compile } from "../../src/build/compile.ts";
import { selfSignedCertificate } from "../support/certificate.ts";
import { cli } from "../support/server-process.ts";

/**
 * `iplookup config check` refuses, with exit 2, what `serve` would refuse at start with
 * exit 2 (the unit runs the check before serve: CONTRACT §17), with serve's message and
 * the configuration file's line of the setting at fault.
 */

const dir = mkdtempSync(join(tmpdir(), "iplookup-config-check-"));
const binary = join(dir, "iplookup");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

beforeAll(() => {
  compile(binary, null);
}, 120_000);

let fileCount = 0;
function configFile(text: string): string {
  const path = join(dir, `config-${++fileCount}.toml`);
  writeFileSync(path, text);
  return path;
}

/**
 * The check and serve on the same file: serve's own refusal (exit 2, before it listens),
 * and the check's, which must be the same message followed by where the settings are.
 */
function checkAndServe(path: string, command?: string[]) {
  const served = cli(["serve", "--config", path, "--host", "127.0.0.1", "--port", "0", "--workers", "1", "--state", join(dir, "state.db")], {}, command);
  const checked = cli(["config", "check", "--config", path], {}, command);
  return { served, checked };
}

describe("config check refuses what serve refuses at start", () => {
  test("update-every with the binary's embedded data", () => {
    const path = configFile('update-every = "24h"\n');
    const { served, checked } = checkAndServe(path, [binary]);
    expect(served.code).toBe(2);
    expect(served.stderr).toStartWith("iplookup: --update-every: the data embedded in the binary cannot be updated");
    expect(checked).toEqual({ code: 2, stdout: "", stderr: `${served.stderr.trimEnd()} (update-every at ${path}:1)\n` });
  });

  test("update-every with a data file that records no sources (the checkout's default data)", () => {
    const path = configFile('update-every = "24h"\n');
    const { served, checked } = checkAndServe(path);
    expect(served.code).toBe(2);
    expect(served.stderr).toContain("records no sources to update from");
    expect(checked).toEqual({ code: 2, stdout: "", stderr: `${served.stderr.trimEnd()} (update-every at ${path}:1)\n` });
  });

  test("a data file that is not there", () => {
    const path = configFile('port = 8080\ndata = "/nonexistent/data.db"\n');
    const { served, checked } = checkAndServe(path);
    expect(served).toMatchObject({ code: 2, stderr: "iplookup: --data: there is no data file at /nonexistent/data.db\n" });
    expect(checked).toEqual({ code: 2, stdout: "", stderr: `iplookup: --data: there is no data file at /nonexistent/data.db (data at ${path}:2)\n` });
  });

  test("TLS files that are not there; a usable pair passes", () => {
    const missing = configFile(`tls-cert = "${join(dir, "missing.crt")}"\ntls-key = "${join(dir, "missing.key")}"\n`);
    const { served, checked } = checkAndServe(missing);
    expect(served.code).toBe(2);
    expect(served.stderr).toStartWith(`iplookup: --tls-cert/--tls-key: cannot read the TLS certificate ${join(dir, "missing.crt")}`);
    expect(checked).toEqual({ code: 2, stdout: "", stderr: `${served.stderr.trimEnd()} (tls-cert at ${missing}:1, tls-key at ${missing}:2)\n` });

    const pair = selfSignedCertificate(dir, "check");
    const usable = configFile(`tls-cert = "${pair.cert}"\ntls-key = "${pair.key}"\n`);
    expect(cli(["config", "check", "--config", usable])).toMatchObject({ code: 0, stderr: "" });
  });

  test("a value given by a flag or variable is refused the same, with no file line", () => {
    expect(cli(["config", "check", "--data", "/nonexistent/data.db"])).toEqual({ code: 2, stdout: "", stderr: "iplookup: --data: there is no data file at /nonexistent/data.db\n" });
    expect(cli(["config", "check", "--json"], { IPLOOKUP_DATA: "/nonexistent/data.db" })).toMatchObject({ code: 2, stdout: "" });
  });
});

test("the binary's embedded data: --json gives it as null, with embedded true, and the table as embedded", () => {
  const env = { HOME: dir, IPLOOKUP_DATA: "", IPLOOKUP_CONFIG: "" };
  const json = cli(["config", "check", "--json"], env, [binary]);
  expect(json).toMatchObject({ code: 0, stderr: "" });
  expect(JSON.parse(json.stdout).settings.data).toEqual({ value: null, source: "default", embedded: true });
  const table = cli(["config", "check"], env, [binary]);
  expect(table.stdout.split("\n").find((row) => row.startsWith("data "))?.replace(/\s+/g, " ")).toBe("data embedded default");
});

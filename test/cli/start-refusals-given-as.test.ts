import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cli } from "../support/server-process.ts";

/**
 * What `serve` refuses at start (exit 2, before it listens), and `config check` with it,
 * names the setting at fault as it was given (docs/command-line.md): its flag, or its
 * environment variable when that gave the value. `--update-every` on data that records
 * no sources (the checkout's default data), and a TLS pair whose files are not there.
 */

const dir = mkdtempSync(join(tmpdir(), "iplookup-given-as-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** No setting from the calling shell: each case gives its own. */
const CLEAN = { IPLOOKUP_CONFIG: "", IPLOOKUP_DATA: "", IPLOOKUP_UPDATE_EVERY: "", IPLOOKUP_TLS_CERT: "", IPLOOKUP_TLS_KEY: "" };

let states = 0;
/** serve, and config check, with the same settings. */
function serveAndCheck(args: string[], env: Record<string, string>) {
  const served = cli(["serve", "--host", "127.0.0.1", "--port", "0", "--admin-port", "off", "--workers", "1", "--state", join(dir, `state-${++states}.db`), ...args], { ...CLEAN, ...env });
  const checked = cli(["config", "check", ...args], { ...CLEAN, ...env });
  return { served, checked };
}

describe("a refusal at start names the setting as it was given", () => {
  test.each([
    ["the flag", ["--update-every", "24h"], {}, "--update-every"],
    ["the environment variable", [], { IPLOOKUP_UPDATE_EVERY: "24h" }, "IPLOOKUP_UPDATE_EVERY"],
  ] as const)("update-every on data that records no sources, from %s", (_from, args, env, name) => {
    const { served, checked } = serveAndCheck([...args], env);
    for (const result of [served, checked]) {
      expect(result.code).toBe(2);
      expect(result.stdout).toBe("");
      expect(result.stderr).toStartWith(`iplookup: ${name}: `);
      expect(result.stderr).toContain("records no sources to update from");
    }
  });

  const cert = join(dir, "missing.crt");
  const key = join(dir, "missing.key");
  test.each([
    ["the flags", ["--tls-cert", cert, "--tls-key", key], {}, "--tls-cert/--tls-key"],
    ["the environment variables", [], { IPLOOKUP_TLS_CERT: cert, IPLOOKUP_TLS_KEY: key }, "IPLOOKUP_TLS_CERT/IPLOOKUP_TLS_KEY"],
    ["a flag and a variable", ["--tls-cert", cert], { IPLOOKUP_TLS_KEY: key }, "--tls-cert/IPLOOKUP_TLS_KEY"],
  ] as const)("TLS files that are not there, from %s", (_from, args, env, names) => {
    const { served, checked } = serveAndCheck([...args], env);
    for (const result of [served, checked]) {
      expect(result.code).toBe(2);
      expect(result.stdout).toBe("");
      expect(result.stderr).toStartWith(`iplookup: ${names}: cannot read the TLS certificate ${cert}: `);
    }
  });
});

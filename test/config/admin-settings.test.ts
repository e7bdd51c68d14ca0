import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError } from "../../src/config/config-error.ts";
import { defaultDataPath } from "../../src/config/paths.ts";
import { readServeConfig } from "../../src/config/serve-config.ts";
import { configErrorOf as errorOf, configFiles } from "../support/config-files.ts";
import { runCliInProcess } from "../support/in-process-cli.ts";

test("the admin listener: 127.0.0.1:8081 by default; flags win over IPLOOKUP_ADMIN_HOST and IPLOOKUP_ADMIN_PORT; off disables it", () => {
  expect(readServeConfig({}, {})).toMatchObject({ adminHost: "127.0.0.1", adminPort: 8081 });
  expect(readServeConfig({}, { IPLOOKUP_ADMIN_HOST: "::1", IPLOOKUP_ADMIN_PORT: "9090" })).toMatchObject({ adminHost: "::1", adminPort: 9090 });
  expect(readServeConfig({ "admin-port": "0", "admin-host": "127.0.0.2" }, { IPLOOKUP_ADMIN_PORT: "9090" })).toMatchObject({ adminHost: "127.0.0.2", adminPort: 0 });
  expect(readServeConfig({}, { IPLOOKUP_ADMIN_PORT: "off" }).adminPort).toBeNull();
  expect(readServeConfig({ "admin-port": "off" }, { IPLOOKUP_ADMIN_PORT: "9090" }).adminPort).toBeNull();
  for (const value of ["65536", "on", "-1", ""]) expect(() => readServeConfig({ "admin-port": value }, {})).toThrow(ConfigError);
  expect(() => readServeConfig({ "admin-host": " " }, {})).toThrow(ConfigError);
});

test("--port and --admin-port on one port of one address are refused before anything listens, naming both", () => {
  const refusal = (flags: Record<string, string>, env: Record<string, string> = {}) => {
    try {
      readServeConfig(flags, env);
      return "";
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return (error as Error).message;
    }
  };
  const advice = "the API and the admin listener need one each; choose another --admin-port (or --admin-port off)";
  expect(refusal({ host: "127.0.0.1", port: "9000", "admin-port": "9000" })).toBe(`--port and --admin-port name the same port, 9000, on 127.0.0.1: ${advice}`);
  expect(refusal({ port: "9000" }, { IPLOOKUP_ADMIN_PORT: "9000" })).toBe(
    "--port and IPLOOKUP_ADMIN_PORT name the same port, 9000, on :: and 127.0.0.1, which overlap: the API and the admin listener need one each; choose another IPLOOKUP_ADMIN_PORT (or IPLOOKUP_ADMIN_PORT=off)",
  );
  expect(refusal({ host: "0.0.0.0", port: "9000", "admin-port": "9000", "admin-host": "127.0.0.2" })).toBe(`--port and --admin-port name the same port, 9000, on 0.0.0.0 and 127.0.0.2, which overlap: ${advice}`);
  // Apart: another port, port 0 (a free one each), addresses of two families, no admin listener.
  expect(refusal({ port: "9000", "admin-port": "9001" })).toBe("");
  expect(refusal({ port: "0", "admin-port": "0" })).toBe("");
  expect(refusal({ host: "::1", port: "9000", "admin-port": "9000", "admin-host": "127.0.0.1" })).toBe("");
  expect(refusal({ host: "0.0.0.0", port: "9000", "admin-port": "9000", "admin-host": "::1" })).toBe("");
  expect(refusal({ port: "8081", "admin-port": "off" })).toBe("");
});

test("the clash names each value as it was given: its flag, its environment variable, or its file key with the line; a host from the environment too", async () => {
  const dir = mkdtempSync(join(tmpdir(), "iplookup-admin-settings-"));
  try {
    const advice = (name: string, off: string) => `the API and the admin listener need one each; choose another ${name} (or ${off})`;
    expect(errorOf(() => readServeConfig({}, { IPLOOKUP_PORT: "8081" }))).toBe(
      `IPLOOKUP_PORT and --admin-port name the same port, 8081, on :: and 127.0.0.1, which overlap: ${advice("--admin-port", "--admin-port off")}`,
    );
    expect(errorOf(() => readServeConfig({ port: "9000", "admin-port": "9000" }, { IPLOOKUP_HOST: "0.0.0.0", IPLOOKUP_ADMIN_HOST: "127.0.0.2" }))).toBe(
      `--port and --admin-port name the same port, 9000, on 0.0.0.0 (IPLOOKUP_HOST) and 127.0.0.2 (IPLOOKUP_ADMIN_HOST), which overlap: ${advice("--admin-port", "--admin-port off")}`,
    );
    expect(errorOf(() => readServeConfig({ port: "9000" }, { IPLOOKUP_ADMIN_PORT: "9000", IPLOOKUP_HOST: "127.0.0.1" }))).toBe(
      `--port and IPLOOKUP_ADMIN_PORT name the same port, 9000, on 127.0.0.1 (IPLOOKUP_HOST): ${advice("IPLOOKUP_ADMIN_PORT", "IPLOOKUP_ADMIN_PORT=off")}`,
    );
    expect(errorOf(() => readServeConfig({ "admin-host": "::1" }, { IPLOOKUP_HOST: "::", IPLOOKUP_ADMIN_HOST: "::", IPLOOKUP_PORT: "9000", IPLOOKUP_ADMIN_PORT: "9000" }))).toBe(
      `IPLOOKUP_PORT and IPLOOKUP_ADMIN_PORT name the same port, 9000, on :: (IPLOOKUP_HOST) and ::1, which overlap: ${advice("IPLOOKUP_ADMIN_PORT", "IPLOOKUP_ADMIN_PORT=off")}`,
    );
    // The file's values: named as their flags, and by their lines at the end.
    const path = configFiles(dir)('admin-port = 9000\nadmin-host = "0.0.0.0"\n');
    expect(errorOf(() => readServeConfig({ config: path }, { IPLOOKUP_PORT: "9000" }))).toBe(
      `IPLOOKUP_PORT and --admin-port name the same port, 9000, on :: and 0.0.0.0, which overlap: ${advice("--admin-port", "--admin-port off")} (admin-port at ${path}:1, admin-host at ${path}:2)`,
    );
    // config check says it so, with exit 2, as serve does.
    const checked = await runCliInProcess(defaultDataPath(), ["config", "check"], { HOME: dir, IPLOOKUP_ADMIN_PORT: "8080" });
    expect(checked).toEqual({
      code: 2,
      stdout: "",
      stderr: `iplookup: --port and IPLOOKUP_ADMIN_PORT name the same port, 8080, on :: and 127.0.0.1, which overlap: ${advice("IPLOOKUP_ADMIN_PORT", "IPLOOKUP_ADMIN_PORT=off")}\n`,
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("--host and --admin-host are compared as addresses: one address written two ways, IPv4-mapped, or localhost for a loopback, on one port, is refused", () => {
  const refused = (host: string, adminHost: string) => {
    try {
      readServeConfig({ host, port: "9000", "admin-host": adminHost, "admin-port": "9000" }, {});
      return false;
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toStartWith("--port and --admin-port name the same port, 9000, on ");
      return true;
    }
  };
  for (const [host, adminHost] of [
    ["::1", "0:0:0:0:0:0:0:1"],
    ["::1", "0000::0001"],
    ["0:0:0:0:0:0:0:0", "127.0.0.1"],
    ["0.0.0.0", "::ffff:127.0.0.1"],
    ["::ffff:127.0.0.1", "127.0.0.1"],
    ["127.0.0.1", "localhost"],
    ["LocalHost", "::1"],
    ["0.0.0.0", "localhost"],
  ]) {
    expect([host, adminHost, refused(host!, adminHost!)]).toEqual([host, adminHost, true]);
    expect([adminHost, host, refused(adminHost!, host!)]).toEqual([adminHost, host, true]);
  }
  // Apart: two loopback addresses, an IPv6 address and IPv4's any, another host name.
  for (const [host, adminHost] of [["127.0.0.1", "127.0.0.2"], ["::ffff:127.0.0.1", "::1"], ["0.0.0.0", "0:0:0:0:0:0:0:1"], ["127.0.0.1", "example.internal"]]) {
    expect([host, adminHost, refused(host!, adminHost!)]).toEqual([host, adminHost, false]);
  }
});

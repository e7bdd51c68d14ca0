import { describe, expect, test } from "bun:test";
import { ConfigError } from "../../src/config/config-error.ts";
import { join, resolve } from "node:path";
import { readServeConfig } from "../../src/config/serve-config.ts";

describe("readServeConfig", () => {
  test("defaults", () => {
    const config = readServeConfig({}, { HOME: "/home/op" });
    // Every IPv6 and IPv4 address (serve falls back to 0.0.0.0 without IPv6).
    expect(config.host).toBe("::");
    expect(config.port).toBe(8080);
    expect(config.statePath).toBe("/home/op/.local/state/iplookup/state.db");
    expect(config.dataPath.endsWith("data/iplookup-data.db")).toBe(true);
    expect(config.trustProxy).toEqual([]);
    expect(config.maxBody).toBe(2 * 1024 * 1024);
  });

  test("XDG_STATE_HOME places the state file", () => {
    expect(readServeConfig({}, { XDG_STATE_HOME: "/var/state" }).statePath).toBe("/var/state/iplookup/state.db");
  });

  test("a flag wins over its environment variable, which wins over the default", () => {
    expect(readServeConfig({}, { IPLOOKUP_PORT: "9000" }).port).toBe(9000);
    expect(readServeConfig({ port: "9001" }, { IPLOOKUP_PORT: "9000" }).port).toBe(9001);
    expect(readServeConfig({}, { IPLOOKUP_MAX_BODY: "512KiB" }).maxBody).toBe(512 * 1024);
    expect(readServeConfig({ state: "/tmp/s.db" }, {}).statePath).toBe("/tmp/s.db");
  });

  test("--state and --data are made absolute against the working directory; :memory: and URLs stay as given", () => {
    const config = readServeConfig({ state: "state/s.db", data: "./d.db" }, {});
    expect(config.statePath).toBe(join(process.cwd(), "state", "s.db"));
    expect(config.dataPath).toBe(join(process.cwd(), "d.db"));
    expect(readServeConfig({}, { IPLOOKUP_STATE: "../s.db", IPLOOKUP_DATA: "d.db" })).toMatchObject({
      statePath: resolve(process.cwd(), "..", "s.db"),
      dataPath: join(process.cwd(), "d.db"),
    });
    expect(readServeConfig({}, { XDG_STATE_HOME: "relative" }).statePath).toBe(join(process.cwd(), "relative", "iplookup", "state.db"));
    expect(readServeConfig({ state: "/tmp/../tmp/s.db" }, {}).statePath).toBe("/tmp/s.db");
    for (const kept of [":memory:", "postgres://iplookup@db.example/iplookup", "postgresql://db/x?sslmode=require"]) {
      expect(readServeConfig({ state: kept }, {}).statePath).toBe(kept);
    }
  });

  test("a host is an IPv4 or IPv6 address or a host name", () => {
    for (const host of ["::", "0.0.0.0", "127.0.0.1", "::1", "fd00::5", "localhost", "api.example.com", "node-1"]) {
      expect(readServeConfig({ host, "admin-host": host }, {})).toMatchObject({ host, adminHost: host });
    }
  });

  test("trusted proxies parse as CIDR blocks", () => {
    const config = readServeConfig({ "trust-proxy": "10.0.0.0/8, 127.0.0.1,fd00::/8" }, {});
    expect(config.trustProxy.map((cidr) => `${cidr.network.text}/${cidr.prefix}`)).toEqual(["10.0.0.0/8", "127.0.0.1/32", "fd00::/8"]);
  });

  test.each([
    [{ port: "80a" }, {}, /--port/],
    [{ port: "70000" }, {}, /--port/],
    [{}, { IPLOOKUP_PORT: "-1" }, /IPLOOKUP_PORT/],
    [{ "trust-proxy": "10.0.0.0/33" }, {}, /--trust-proxy/],
    [{ "trust-proxy": "010.0.0.0/8" }, {}, /--trust-proxy/],
    [{ "max-body": "2GB!" }, {}, /--max-body/],
    [{ host: " " }, {}, /--host/],
    // Not an address nor a host name: a bad value, refused before anything listens.
    [{ host: "999.1.1.1" }, {}, /--host: "999.1.1.1" is not an address or host name/],
    [{ host: "127.0.0.1:80" }, {}, /--host: "127.0.0.1:80" is not an address or host name/],
    [{ host: "[::1]" }, {}, /--host/],
    [{}, { IPLOOKUP_ADMIN_HOST: "bad host" }, /IPLOOKUP_ADMIN_HOST/],
    // A URL that is not PostgreSQL's is not taken for a file's path (its password hidden).
    [{ state: "postgress://u:secretpw@127.0.0.1/db" }, {}, /--state: "postgress:\/\/u:\*\*\*@127\.0\.0\.1\/db" is a URL iplookup cannot open/],
    [{}, { IPLOOKUP_STATE: "mysql://x" }, /IPLOOKUP_STATE/],
    [{ workers: "100000" }, {}, /--workers: 100000 is more than 256/],
  ])("bad values are a ConfigError naming the flag: %p %p", (flags, env, message) => {
    expect(() => readServeConfig(flags, env)).toThrow(ConfigError);
    expect(() => readServeConfig(flags, env)).toThrow(message);
  });
});

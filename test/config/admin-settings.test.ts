import { expect, test } from "bun:test";
import { ConfigError } from "../../src/config/config-error.ts";
import { readServeConfig } from "../../src/config/serve-config.ts";

test("the admin listener: 127.0.0.1:8081 by default; flags win over IPLOOKUP_ADMIN_HOST and IPLOOKUP_ADMIN_PORT; off disables it", () => {
  expect(readServeConfig({}, {})).toMatchObject({ adminHost: "127.0.0.1", adminPort: 8081 });
  expect(readServeConfig({}, { IPLOOKUP_ADMIN_HOST: "::1", IPLOOKUP_ADMIN_PORT: "9090" })).toMatchObject({ adminHost: "::1", adminPort: 9090 });
  expect(readServeConfig({ "admin-port": "0", "admin-host": "127.0.0.2" }, { IPLOOKUP_ADMIN_PORT: "9090" })).toMatchObject({ adminHost: "127.0.0.2", adminPort: 0 });
  expect(readServeConfig({}, { IPLOOKUP_ADMIN_PORT: "off" }).adminPort).toBeNull();
  expect(readServeConfig({ "admin-port": "off" }, { IPLOOKUP_ADMIN_PORT: "9090" }).adminPort).toBeNull();
  for (const value of ["65536", "on", "-1", ""]) expect(() => readServeConfig({ "admin-port": value }, {})).toThrow(ConfigError);
  expect(() => readServeConfig({ "admin-host": " " }, {})).toThrow(ConfigError);
});

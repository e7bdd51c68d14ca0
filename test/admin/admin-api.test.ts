import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { postgresAvailable, testStates } from "../support/postgres.ts";
import { cli, startServerProcess } from "../support/server-process.ts";
import { adminApiSuite } from "./admin-api-suite.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-admin-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

describe("the admin API on a SQLite state file", () => {
  adminApiSuite(async () => join(dir, `state-${++files}.db`));
});

const states = testStates();
describe.skipIf(!postgresAvailable)("the admin API on PostgreSQL", () => {
  adminApiSuite(states.fresh);
});

describe("the admin listener", () => {
  test("--admin-port off: no admin listener, and the start-up line says admin null", async () => {
    const server = await startServerProcess(["--state", join(dir, "off.db"), "--admin-port", "off"]);
    expect(server.stderr()).toContain('"admin":null');
    expect(await server.stop()).toBe(0);
  });

  test("IPLOOKUP_ADMIN_PORT and IPLOOKUP_ADMIN_HOST set it like the flags", async () => {
    const server = await startServerProcess(["--state", join(dir, "env.db")], { env: { IPLOOKUP_ADMIN_PORT: "0", IPLOOKUP_ADMIN_HOST: "127.0.0.1" } });
    const admin = /"admin":"([^"]+)"/.exec(server.stderr())![1]!;
    expect((await fetch(`${admin}console`)).status).toBe(200);
    expect(await server.stop()).toBe(0);
  });

  test("an admin port in use: one clear error naming --admin-port, exit 1, without waiting", async () => {
    const holder = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    try {
      const started = performance.now();
      const result = cli(["serve", "--host", "127.0.0.1", "--port", "0", "--workers", "2", "--admin-port", String(holder.port), "--state", join(dir, "held.db")]);
      expect(result.code).toBe(1);
      // It fails rather than waits: the bound is for a hang, with room for a start-up on a
      // busy machine (a second or two there, tens of milliseconds on an idle one).
      expect(performance.now() - started).toBeLessThan(15_000);
      expect(result.stderr).toContain(`cannot listen on 127.0.0.1:${holder.port}: the port is in use`);
      expect(result.stderr).toContain("--admin-port");
    } finally {
      holder.stop(true);
    }
  });

  test("bad values of --admin-port exit 2", () => {
    for (const value of ["99999", "on", "-1"]) {
      const result = cli(["serve", "--admin-port", value, "--state", join(dir, "never.db")]);
      expect({ value, code: result.code }).toEqual({ value, code: 2 });
    }
  });
});

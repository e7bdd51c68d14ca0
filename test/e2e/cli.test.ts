import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cli } from "../support/server-process.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-cli-"));
const state = join(dir, "nested", "state.db");
const env = { IPLOOKUP_STATE: state };
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the command line", () => {
  test("--help everywhere, exit 0", () => {
    for (const args of [["--help"], ["serve", "--help"], ["keys", "--help"], ["keys", "create", "--help"], ["keys", "list", "--help"], ["keys", "revoke", "--help"], ["keys", "rotate", "--help"], ["plans", "list", "--help"], ["plans", "set", "--help"], ["usage", "--help"], ["lookup", "--help"], ["backup", "--help"], ["data", "info", "--help"], ["data", "import", "--help"]]) {
      const result = cli(args, env);
      expect(result.code).toBe(0);
      expect(result.stdout).toContain("Usage: iplookup");
    }
  });

  test("bad commands, flags and values exit 2 with a message and leave nothing behind", () => {
    const cases = [
      ["frobnicate"],
      ["keys", "frobnicate"],
      ["keys", "create"],
      ["keys", "create", "--name", "x", "--bogus"],
      ["serve", "--port", "99999"],
      ["plans", "set", "newplan", "--max-batch", "10"],
      ["plans", "set", "free", "--rate-limit", "fast"],
      ["keys", "revoke"],
      ["lookup", "1.1.1.1", "--data", join(dir, "no-such-data.db")],
      ["data", "info", "--data", "/etc/hostname"],
      ["serve", "--port", "0", "--data", join(dir, "no-such-data.db")],
    ];
    for (const args of cases) {
      const result = cli(args, { IPLOOKUP_STATE: join(dir, "never", "state.db") });
      expect({ args, code: result.code }).toEqual({ args, code: 2 });
      expect(result.stderr).toMatch(/^iplookup: /);
    }
    expect(() => statSync(join(dir, "never", "state.db"))).toThrow();
  });

  test("a key on an unknown plan is refused with exit 2 and not created", () => {
    const result = cli(["keys", "create", "--name", "ghost", "--plan", "nope"], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("nope");
    expect(cli(["keys", "list", "--json"], env).stdout).not.toContain("ghost");
  });

  test("keys: create, list, rotate, revoke", () => {
    const created = JSON.parse(cli(["keys", "create", "--name", "acme", "--json"], env).stdout) as Record<string, string>;
    expect(created.plan).toBe("free");
    expect(statSync(state).mode & 0o777).toBe(0o600);
    const listed = JSON.parse(cli(["keys", "list", "--json"], env).stdout) as Array<Record<string, unknown>>;
    expect(listed.map((key) => key.id)).toContain(created.id);
    expect(JSON.stringify(listed)).not.toContain(created.key!);

    const rotated = JSON.parse(cli(["keys", "rotate", created.id!, "--json"], env).stdout) as Record<string, string>;
    expect(rotated.id).toBe(created.id);
    expect(rotated.key).not.toBe(created.key);

    expect(cli(["keys", "revoke", created.id!], env).code).toBe(0);
    expect(cli(["keys", "rotate", created.id!], env).code).toBe(1);
    expect(cli(["keys", "revoke", "key_doesnotexist"], env).code).toBe(1);
    const human = cli(["keys", "list"], env).stdout;
    expect(human).toContain("revoked");
  });

  test("plans: list, set an existing plan partly, create a new one fully", () => {
    const seeded = JSON.parse(cli(["plans", "list", "--json"], env).stdout);
    expect(seeded).toEqual([
      { name: "free", max_batch_size: 100, monthly_units: 100000, rate_limit: 10 },
      { name: "standard", max_batch_size: 1000, monthly_units: 10000000, rate_limit: 100 },
      { name: "unlimited", max_batch_size: 10000, monthly_units: null, rate_limit: null },
    ]);
    expect(cli(["plans", "set", "free", "--rate-limit", "20"], env).code).toBe(0);
    expect(cli(["plans", "set", "gold", "--max-batch", "500", "--monthly-units", "unlimited", "--rate-limit", "50"], env).code).toBe(0);
    const plans = JSON.parse(cli(["plans", "list", "--json"], env).stdout) as Array<Record<string, unknown>>;
    expect(plans.find((plan) => plan.name === "free")).toEqual({ name: "free", max_batch_size: 100, monthly_units: 100000, rate_limit: 20 });
    expect(plans.find((plan) => plan.name === "gold")).toEqual({ name: "gold", max_batch_size: 500, monthly_units: null, rate_limit: 50 });
  });

  test("usage answers the /v1/usage shape", () => {
    const created = JSON.parse(cli(["keys", "create", "--name", "u", "--plan", "standard", "--json"], env).stdout) as Record<string, string>;
    const usage = JSON.parse(cli(["usage", created.id!, "--json"], env).stdout);
    expect(usage).toMatchObject({
      key: { id: created.id, name: "u" },
      plan: { name: "standard", max_batch_size: 1000, monthly_units: 10000000, rate_limit: 100 },
      units: { used: 0, limit: 10000000, remaining: 10000000 },
    });
    expect(cli(["usage"], env).stdout).toContain(created.id!);
  });

  test("lookup works offline, without a server or key", () => {
    const result = cli(["lookup", "1.1.1.1", "2606:4700:4700::1111"], env);
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split("\n").map((line) => JSON.parse(line));
    expect(lines[0]).toMatchObject({ ip: "1.1.1.1", asn: 13335, country_code: "AU" });
    expect(lines[1]).toMatchObject({ ip: "2606:4700:4700::1111", asn: 13335 });
    const bad = cli(["lookup", "10.0.0.1", "nope"], env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("private-use");
  });

  test("backup copies the state file consistently and refuses to overwrite", () => {
    const target = join(dir, "backup.db");
    expect(cli(["backup", target], env).code).toBe(0);
    expect(statSync(target).mode & 0o777).toBe(0o600);
    const keys = JSON.parse(cli(["keys", "list", "--json"], { IPLOOKUP_STATE: target }).stdout) as unknown[];
    expect(keys).toEqual(JSON.parse(cli(["keys", "list", "--json"], env).stdout));
    expect(cli(["backup", target], env).code).toBe(2);
  });

  test("data info shows the sources with their licences and attribution", () => {
    const human = cli(["data", "info"], env);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain("CC BY 4.0");
    expect(human.stdout).toContain("CC0");
    expect(human.stdout).toMatch(/RouteViews/);
    expect(human.stdout).toMatch(/DB-IP/);
    expect(human.stdout).toMatch(/NRO/);
    const json = JSON.parse(cli(["data", "info", "--json"], env).stdout) as { sources: Array<{ version: string }> };
    expect(json.sources.map((source) => source.version)).toEqual(["2.3.2026061719", "2.3.2026061719"]);
  });
});

import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultDataPath } from "../../src/config/paths.ts";
import { hashSecret } from "../../src/store/secret.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { cli } from "../support/server-process.ts";
import { makeTestApp } from "../support/test-app.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-cli-"));
const state = join(dir, "nested", "state.db");
const env = { IPLOOKUP_STATE: state };
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the command line", () => {
  test("--help everywhere, exit 0", () => {
    for (const args of [["--help"], ["serve", "--help"], ["keys", "--help"], ["keys", "create", "--help"], ["keys", "list", "--help"], ["keys", "revoke", "--help"], ["keys", "rotate", "--help"], ["keys", "set-plan", "--help"], ["plans", "list", "--help"], ["plans", "set", "--help"], ["usage", "--help"], ["lookup", "--help"], ["backup", "--help"], ["data", "info", "--help"], ["data", "import", "--help"], ["data", "update", "--help"]]) {
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
      ["keys", "set-plan", "key_x"],
      ["keys", "set-plan", "key_x", "free", "extra"],
      ["lookup", "1.1.1.1", "--jsn"],
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

  test("a key on an unknown plan is refused with exit 1, as keys update and set-plan refuse one, and not created", () => {
    const result = cli(["keys", "create", "--name", "ghost", "--plan", "nope"], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("nope");
    expect(cli(["keys", "list", "--json"], env).stdout).not.toContain("ghost");
    // On a new state path, neither the file nor the folders made for it stay.
    const fresh = join(dir, "fresh", "deeper", "state.db");
    expect(cli(["keys", "create", "--name", "ghost", "--plan", "nope", "--state", fresh]).code).toBe(1);
    expect(existsSync(join(dir, "fresh"))).toBe(false);
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

  test("keys set-plan moves a key to another plan; its secret stays", async () => {
    const created = JSON.parse(cli(["keys", "create", "--name", "mover", "--json"], env).stdout) as Record<string, string>;
    const moved = cli(["keys", "set-plan", created.id!, "standard"], env);
    expect(moved).toMatchObject({ code: 0, stderr: "" });
    expect(moved.stdout).toBe(`Key ${created.id} (mover) is now on plan standard; its secret is unchanged.\n`);
    const store = SqliteStore.open(state);
    expect((await store.findActiveKey(hashSecret(created.key!)))?.plan.name).toBe("standard");
    await store.close();
    const json = JSON.parse(cli(["keys", "set-plan", created.id!, "unlimited", "--json"], env).stdout);
    expect(json).toEqual({
      id: created.id,
      name: "mover",
      plan: "unlimited",
      created_at: expect.any(String),
      revoked_at: null,
      expires_at: null,
      allowed_cidrs: null,
      allowed_origins: null,
      metadata: {},
      grace_until: null,
    });
    const again = cli(["keys", "set-plan", created.id!, "unlimited"], env);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("is on plan unlimited already; nothing changed");
  });

  test("keys revoke, rotate, set-plan and update: an unknown id, a revoked key or an unknown plan exits 1 with a message and changes nothing", () => {
    const created = JSON.parse(cli(["keys", "create", "--name", "refused", "--json"], env).stdout) as Record<string, string>;
    const id = created.id!;
    const refuse = (args: string[], message: RegExp) => {
      const before = cli(["keys", "list", "--json"], env).stdout;
      const result = cli(args, env);
      expect({ args, code: result.code, stdout: result.stdout }).toEqual({ args, code: 1, stdout: "" });
      expect(result.stderr).toMatch(message);
      expect(cli(["keys", "list", "--json"], env).stdout).toBe(before);
    };
    const seeList = /\(see 'bun \S*src\/main\.ts keys list'\)/;
    refuse(["keys", "revoke", "key_nope"], seeList);
    refuse(["keys", "rotate", "key_nope"], /^iplookup: no key key_nope /);
    refuse(["keys", "set-plan", "key_nope", "standard"], /^iplookup: no key key_nope /);
    refuse(["keys", "set-plan", id, "gold-nope"], /^iplookup: there is no plan "gold-nope" \(see 'bun \S*src\/main\.ts plans list'\)/);

    expect(cli(["keys", "revoke", id], env).code).toBe(0);
    // "already" only for a second revoke: each other command says what a revoked key cannot have.
    const revoked = (refusal: string) => new RegExp(`^iplookup: key ${id} \\(refused\\) was revoked on \\d{4}-\\d\\d-\\d\\dT[0-9:.]+Z${refusal}\n$`);
    refuse(["keys", "revoke", id], revoked(" already"));
    refuse(["keys", "rotate", id], revoked("; a revoked key cannot be rotated"));
    refuse(["keys", "set-plan", id, "standard"], revoked("; a revoked key keeps its plan"));
    refuse(["keys", "update", id, "--plan", "standard"], revoked("; a revoked key cannot be changed"));
    refuse(["keys", "update", id, "--metadata", "none"], revoked("; a revoked key cannot be changed"));
  });

  test("commands that only read or change the state refuse a state file that does not exist, exit 1, and create nothing", () => {
    const missing = join(dir, "typo", "state.db");
    const backup = join(dir, "typo-backup.db");
    for (const args of [
      ["keys", "list"],
      ["keys", "list", "--json"],
      ["keys", "revoke", "key_x"],
      ["keys", "rotate", "key_x"],
      ["keys", "set-plan", "key_x", "free"],
      ["usage"],
      ["usage", "key_x", "--json"],
      ["plans", "list"],
      ["backup", backup],
    ]) {
      for (const result of [cli([...args, "--state", missing]), cli(args, { IPLOOKUP_STATE: missing })]) {
        expect({ args, code: result.code, stdout: result.stdout }).toEqual({ args, code: 1, stdout: "" });
        expect(result.stderr).toStartWith(`iplookup: there is no state file at ${missing}; check --state or IPLOOKUP_STATE`);
      }
    }
    expect(existsSync(join(dir, "typo"))).toBe(false);
    expect(existsSync(backup)).toBe(false);
    // keys create and plans set start a new state file.
    expect(cli(["plans", "set", "gold", "--max-batch", "1", "--monthly-units", "1", "--rate-limit", "1", "--state", missing]).code).toBe(0);
    expect(statSync(missing).mode & 0o777).toBe(0o600);
    expect(cli(["keys", "list", "--state", missing])).toMatchObject({ code: 0, stderr: "" });
  });

  test("relative --state and --data are shown as absolute paths", () => {
    mkdirSync(join(dir, "cwd"));
    const cwd = realpathSync(join(dir, "cwd"));
    const run = (args: string[]) => {
      const result = Bun.spawnSync([process.execPath, join(import.meta.dir, "..", "..", "src", "main.ts"), ...args], { cwd, env: { ...process.env, IPLOOKUP_STATE: "" }, stdout: "pipe", stderr: "pipe" });
      return { code: result.exitCode, stdout: result.stdout.toString(), stderr: result.stderr.toString() };
    };
    expect(run(["keys", "create", "--name", "here", "--state", "rel/state.db"]).code).toBe(0);
    expect(run(["backup", "copy.db", "--state", "./rel/state.db"]).stdout).toBe(`Backed up ${cwd}/rel/state.db to ${cwd}/copy.db.\n`);
    expect(run(["keys", "list", "--state", "rel/../typo.db"]).stderr).toStartWith(`iplookup: there is no state file at ${cwd}/typo.db;`);
    expect(run(["lookup", "1.1.1.1", "--data", "missing.db"]).stderr).toBe(`iplookup: --data: there is no data file at ${cwd}/missing.db\n`);
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

  test("lookup --json prints what the API answers: one LookupResult, or {results} for several", async () => {
    const app = await makeTestApp();
    try {
      const key = (await app.issueKey("free")).secret;
      const single = await app.request("POST", "/v1/lookup", { key, body: { ip: "1.1.1.1" } });
      expect(cli(["lookup", "--json", "1.1.1.1"], env)).toEqual({ code: 0, stdout: `${await single.text()}\n`, stderr: "" });
      const ips = ["2606:4700:4700::1111", "8.8.8.8", "::ffff:9.9.9.9", "8.8.8.8"];
      const batch = await app.request("POST", "/v1/lookup/batch", { key, body: { ips } });
      expect(cli(["lookup", ...ips, "--json"], env)).toEqual({ code: 0, stdout: `${await batch.text()}\n`, stderr: "" });
    } finally {
      await app.close();
    }
    // Like the API, a bad entry refuses the whole list; each one is named on stderr.
    const bad = cli(["lookup", "--json", "1.1.1.1", "10.0.0.1", "nope"], env);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toBe("");
    expect(bad.stderr).toContain("private-use");
    expect(bad.stderr).toContain("nope");
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
    expect(json.sources.map((source) => source.version)).toEqual(["2.3.2026061719", "2.3.2026061719", expect.stringMatching(/^\d{4}-\d{2}-\d{2}-[0-9a-f]{8}$/)]);
    // The hosting list, the default data's source of privacy.hosting, with its age.
    expect(human.stdout).toContain("Hosting and cloud providers' AS numbers");
    expect(human.stdout).toMatch(/signal: {6}hosting/);
    expect(human.stdout).toMatch(/built: {7}\d{4}-\d{2}-\d{2}T00:00:00\.000Z \(\d+ (seconds|minutes|hours|days) old\)/);
  });

  test("data info --json has snake_case keys, like every other JSON iplookup prints", () => {
    const json = JSON.parse(cli(["data", "info", "--json"], env).stdout);
    const keys = (value: unknown): string[] =>
      value === null || typeof value !== "object" ? [] : Object.entries(value).flatMap(([key, inner]) => [...(Array.isArray(value) ? [] : [key]), ...keys(inner)]);
    expect(keys(json).filter((key) => !/^[a-z][a-z0-9_]*$/.test(key))).toEqual([]);
    expect(json).toMatchObject({ path: defaultDataPath(), embedded: false, data_version: expect.stringMatching(/^\d{8}T\d{6}Z-[0-9a-f]{8}$/), built_at: expect.any(String) });
    expect(json.segments_v4).toBeGreaterThan(100_000);
    expect(json.sources[0]).toMatchObject({ origin: "@ip-location-db/asn", built_at: expect.any(String), rows_v4: expect.any(Number), ranges_v6: expect.any(Number) });
  });
});

test("a reader that stops reading ends the output quietly: exit 0, nothing on stderr", () => {
  const piped = Bun.spawnSync(["bash", "-c", `"${process.execPath}" "${join(import.meta.dir, "..", "..", "src", "main.ts")}" asn AS16509 | head -1; echo "status \${PIPESTATUS[0]}" >&2`], { stdout: "pipe", stderr: "pipe" });
  expect(piped.stdout.toString()).toStartWith("AS16509 ");
  expect(piped.stderr.toString().trim()).toBe("status 0");
});

test("output that cannot be written (a full disk): one line and exit 1, not a stack trace; the key made stands", () => {
  const full = join(dir, "full.db");
  const main = join(import.meta.dir, "..", "..", "src", "main.ts");
  const made = Bun.spawnSync(["bash", "-c", `"${process.execPath}" "${main}" keys create --name lost --state "${full}" > /dev/full`], { stdout: "pipe", stderr: "pipe" });
  expect(made.exitCode).toBe(1);
  const lines = made.stderr.toString().trimEnd().split("\n");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toStartWith("iplookup: cannot write the output: ENOSPC");
  expect(lines[0]).toContain("'keys list'");
  expect(cli(["keys", "list", "--json", "--state", full], env).stdout).toContain('"name":"lost"');
});

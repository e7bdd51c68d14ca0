import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cli } from "../support/server-process.ts";

/**
 * The command line of CONTRACT §16: keys create|update with controls, keys rotate
 * --grace, and iplookup audit; bad values exit 2 and a key that cannot change exits 1,
 * changing nothing either way.
 */
const dir = mkdtempSync(join(tmpdir(), "iplookup-keys-controls-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const env = { IPLOOKUP_STATE: join(dir, "state.db") };
const json = (args: string[]) => {
  const result = cli(args, env);
  expect({ args, code: result.code, stderr: result.stderr }).toEqual({ args, code: 0, stderr: "" });
  return JSON.parse(result.stdout) as Record<string, unknown>;
};

test("keys update changes what it is given, clears with never/any/none, and refuses bad values (2) and revoked keys (1) without a change", () => {
  const { id } = json(["keys", "create", "--name", "web", "--allowed-cidrs", "203.0.113.9/24, 2001:db8::/32", "--json"]) as { id: string };
  const listed = () => (JSON.parse(cli(["keys", "list", "--json"], env).stdout) as Record<string, unknown>[]).find((key) => key.id === id)!;
  expect(listed()).toMatchObject({ allowed_cidrs: ["203.0.113.0/24", "2001:db8::/32"], allowed_origins: null, expires_at: null, metadata: {} });
  expect(json(["keys", "update", id, "--plan", "standard", "--allowed-origins", "https://App.example.com", "--expires-at", "2099-01-01T01:00:00+01:00", "--metadata", '{"a":1}', "--json"])).toMatchObject({
    plan: "standard",
    allowed_origins: ["https://app.example.com"],
    expires_at: "2099-01-01T00:00:00.000Z",
    metadata: { a: 1 },
  });
  const before = cli(["keys", "list", "--json"], env).stdout;
  for (const args of [["--expires-at", "2001-01-01T00:00:00Z"], ["--expires-at", "soon"], ["--allowed-cidrs", "10.0.0.0/33"], ["--allowed-origins", "app.example.com"], ["--metadata", "[1]"], ["--metadata", "{nope"], []]) {
    const result = cli(["keys", "update", id, ...args], env);
    expect({ args, code: result.code }).toEqual({ args, code: 2 });
    expect(result.stderr).toStartWith("iplookup: ");
  }
  expect(cli(["keys", "update", id, "--plan", "nope"], env).code).toBe(1);
  expect(cli(["keys", "list", "--json"], env).stdout).toBe(before);
  expect(json(["keys", "update", id, "--expires-at", "never", "--allowed-cidrs", "any", "--allowed-origins", "any", "--metadata", "none", "--json"])).toMatchObject({
    expires_at: null,
    allowed_cidrs: null,
    allowed_origins: null,
    metadata: {},
  });
  expect(cli(["keys", "revoke", id], env).code).toBe(0);
  const revoked = cli(["keys", "update", id, "--metadata", '{"b":2}'], env);
  expect(revoked.code).toBe(1);
  expect(revoked.stderr).toContain("revoked");
  expect(cli(["keys", "rotate", id, "--grace", "1h"], env).code).toBe(1);
});

test("control characters (C0, DEL, C1) and lone surrogates in --metadata, a key's name or a webhook's URL exit 2, changing nothing", () => {
  const { id } = json(["keys", "create", "--name", "plain", "--json"]) as { id: string };
  const before = cli(["keys", "list", "--json"], env).stdout;
  for (const metadata of ['{"a":"x\\u0007y"}', '{"a":"x\\u009b2J"}', '{"a\\u0085":1}', '{"a":["ok","\\ud800"]}']) {
    const result = cli(["keys", "update", id, "--metadata", metadata], env);
    expect({ metadata, code: result.code }).toEqual({ metadata, code: 2 });
    expect(result.stderr).toContain("a control character or a lone surrogate is not allowed");
  }
  expect(cli(["keys", "create", "--name", "a\u009bb"], env).code).toBe(2);
  expect(cli(["keys", "list", "--json"], env).stdout).toBe(before);
  const hook = cli(["webhooks", "add", "http://127.0.0.1:9/\u009b2J", "--events", "key.created"], env);
  expect(hook.code).toBe(2);
  expect(hook.stderr).toContain("control characters");
  expect(JSON.parse(cli(["webhooks", "list", "--json"], env).stdout)).toEqual([]);
});

test("keys rotate --grace prints how long the old secret works; bad graces exit 2; the table and audit show it", () => {
  const { id } = json(["keys", "create", "--name", "rotating", "--json"]) as { id: string };
  const rotated = cli(["keys", "rotate", id, "--grace", "90m"], env);
  expect(rotated.code).toBe(0);
  expect(rotated.stdout).toMatch(/The old secret keeps working until \d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z\./);
  for (const grace of ["31d", "1w", "soon"]) expect(cli(["keys", "rotate", id, "--grace", grace], env).code).toBe(2);
  expect(cli(["keys", "list"], env).stdout).toMatch(/rotating .* old secret until /);
  const audit = cli(["audit"], env);
  expect(audit.code).toBe(0);
  expect(audit.stdout).toMatch(/^AT\s+ACTOR\s+ACTION\s+TARGET\s+CHANGES\n/);
  expect(audit.stdout).toContain(`cli    key.rotated`);
  expect(audit.stdout).toContain("grace_until: null → ");
  expect(audit.stdout).not.toMatch(/ipl_|[0-9a-f]{64}/);
  for (const args of [["--from", "2026-02-30"], ["--from", "2026-11-02", "--to", "2026-11-01"], ["--from", "2020-01-01", "--to", "2026-01-01"]]) expect(cli(["audit", ...args], env).code).toBe(2);
  expect(cli(["audit", "--from", "2000-01-01", "--to", "2000-01-31"], env).stdout).toBe("No changes recorded from 2000-01-01 to 2000-01-31.\n");
});

test("an empty --allowed-cidrs or --allowed-origins (an empty shell variable, commas alone) exits 2 naming 'any', and no key is made open", () => {
  const count = () => (JSON.parse(cli(["keys", "list", "--json"], env).stdout || "[]") as unknown[]).length;
  const { id } = json(["keys", "create", "--name", "fenced", "--allowed-cidrs", "198.51.100.0/24", "--json"]) as { id: string };
  const before = count();
  for (const [flag, value] of [["--allowed-cidrs", ""], ["--allowed-cidrs", " , ,"], ["--allowed-origins", ""]] as const) {
    const created = cli(["keys", "create", "--name", "open", flag, value], env);
    expect({ flag, value, code: created.code }).toEqual({ flag, value, code: 2 });
    expect(created.stderr).toStartWith(`iplookup: ${flag}: empty; give one or more, comma-separated`);
    expect(created.stderr).toContain('or "any" for none');
    expect(cli(["keys", "update", id, flag, value], env).code).toBe(2);
  }
  expect(count()).toBe(before);
  expect((JSON.parse(cli(["keys", "list", "--json"], env).stdout) as { id: string; allowed_cidrs: unknown }[]).find((key) => key.id === id)?.allowed_cidrs).toEqual(["198.51.100.0/24"]);
});

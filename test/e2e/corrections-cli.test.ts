/**
 * `iplookup corrections set|list|remove`, and the corrections in `iplookup lookup`,
 * `backup` and `state copy` (CONTRACT §15), as separate processes on real state files
 * (and a PostgreSQL database where one can be reached).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { postgresAvailable, testStates } from "../support/postgres.ts";
import { cli } from "../support/server-process.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-corrections-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const freshState = () => join(dir, `state-${++files}.db`);
const states = testStates();

describe("corrections set, list, remove", () => {
  test("set replaces a block's correction whole; list shows them in address order; remove takes one away", () => {
    const state = freshState();
    const env = { IPLOOKUP_STATE: state };
    expect(cli(["corrections", "list"], env)).toMatchObject({ code: 1 }); // no state yet: nothing created
    expect(existsSync(state)).toBe(false);
    expect(cli(["corrections", "set", "2001:DB8::/32", "--asn", "64500", "--note", "lab"], env)).toEqual({ code: 0, stdout: "Corrected 2001:db8::/32: asn=64500.\n", stderr: "" });
    expect(cli(["corrections", "set", "192.0.2.0/24", "--country", "DE", "--city", "Berlin", "--hosting", "true", "--service", "Example"], env).code).toBe(0);
    expect(cli(["corrections", "set", "192.0.2.0/24", "--country", "AT", "--asn", ""], env).stdout).toBe('Corrected 192.0.2.0/24: country_code="AT" asn=null.\n');
    const listed = JSON.parse(cli(["corrections", "list", "--json"], env).stdout) as Record<string, unknown>[];
    expect(listed).toEqual([
      { cidr: "192.0.2.0/24", country_code: "AT", asn: null, note: null, created_at: expect.any(String), updated_at: expect.any(String) },
      { cidr: "2001:db8::/32", asn: 64500, note: "lab", created_at: expect.any(String), updated_at: expect.any(String) },
    ]);
    const table = cli(["corrections", "list"], env).stdout.split("\n");
    expect(table[0]).toMatch(/^CIDR\s+FIELDS\s+NOTE\s+UPDATED$/);
    expect(table[1]).toStartWith('192.0.2.0/24   country_code="AT" asn=null');
    expect(cli(["corrections", "remove", "192.0.2.0/24"], env)).toEqual({ code: 0, stdout: "Removed the correction of 192.0.2.0/24.\n", stderr: "" });
    expect(cli(["corrections", "remove", "192.0.2.0/24"], env)).toEqual({ code: 1, stdout: "", stderr: "iplookup: there is no correction of 192.0.2.0/24\n" });
    expect((JSON.parse(cli(["corrections", "list", "--json"], env).stdout) as unknown[]).length).toBe(1);
  });

  test("bad values exit 2 with the reason and write nothing", () => {
    const state = freshState();
    const env = { IPLOOKUP_STATE: state };
    expect(cli(["corrections", "set", "198.51.100.0/24", "--asn", "1"], env).code).toBe(0);
    const before = cli(["corrections", "list", "--json"], env).stdout;
    const refused: [string[], string][] = [
      [["198.51.100.1/24", "--asn", "2"], "has host bits set: the block of that prefix is 198.51.100.0/24"],
      [["example.com", "--asn", "2"], "is not a CIDR block"],
      [["198.51.100.0/24", "--country", "XX"], '--country: "XX" is not an ISO 3166-1 alpha-2 country code'],
      [["198.51.100.0/24", "--asn", "4294967296"], "--asn: 4294967296 is not an AS number"],
      [["198.51.100.0/24", "--asn", "AS1"], '--asn: "AS1" is not an AS number'],
      [["198.51.100.0/24", "--tor", "yes"], '--tor: "yes" is not true or false'],
      [["198.51.100.0/24", "--city", "a\u0007b"], "--city: 1 to 200 characters"],
      [["198.51.100.0/24", "--note", "only a note"], "a correction names at least one of"],
      [["198.51.100.0/24"], "a correction names at least one of"],
    ];
    for (const [args, message] of refused) {
      const result = cli(["corrections", "set", ...args], env);
      expect({ args, code: result.code }).toEqual({ args, code: 2 });
      expect(result.stderr).toContain(message);
    }
    expect(cli(["corrections", "list", "--json"], env).stdout).toBe(before);
  });
});

describe("iplookup lookup applies the state's corrections", () => {
  test("with --state or IPLOOKUP_STATE; without one, and no default state file, the data alone", () => {
    const state = freshState();
    const plain = JSON.parse(cli(["lookup", "1.1.1.1"], { IPLOOKUP_STATE: "", XDG_STATE_HOME: join(dir, "nowhere"), HOME: join(dir, "nowhere") }).stdout);
    expect(plain).toMatchObject({ network: "1.1.1.0/24", country_code: "AU" });
    expect(cli(["corrections", "set", "1.1.1.0/25", "--country", "DE", "--tor", "true"], { IPLOOKUP_STATE: state }).code).toBe(0);
    const corrected = cli(["lookup", "1.1.1.1", "1.1.1.200", "--state", state]);
    expect(corrected.code).toBe(0);
    const [inside, outside] = corrected.stdout.trim().split("\n").map((line) => JSON.parse(line));
    expect(inside).toEqual({ ...plain, network: "1.1.1.0/25", country_code: "DE", country: "Germany", privacy: { ...plain.privacy, tor: true } });
    expect(outside).toMatchObject({ ip: "1.1.1.200", network: "1.1.1.128/25", country_code: "AU" });
    const json = cli(["lookup", "--json", "1.1.1.1", "1.1.1.200"], { IPLOOKUP_STATE: state });
    expect(JSON.parse(json.stdout)).toEqual({ results: [inside, outside] });
    // The default state file, when it exists, is read as a server reads it.
    const xdg = join(dir, "xdg");
    expect(cli(["corrections", "set", "1.1.1.0/24", "--asn", "64511"], { IPLOOKUP_STATE: join(xdg, "iplookup", "state.db") }).code).toBe(0);
    expect(JSON.parse(cli(["lookup", "1.1.1.1"], { IPLOOKUP_STATE: "", XDG_STATE_HOME: xdg }).stdout)).toEqual({ ...plain, asn: 64511 });
    // A state named that does not exist is refused, and not created.
    const missing = join(dir, "missing.db");
    const refused = cli(["lookup", "1.1.1.1", "--state", missing]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(missing);
    expect(existsSync(missing)).toBe(false);
  });
});

describe("iplookup asn applies the state's corrections", () => {
  test("a block a correction moves leaves one AS and joins another, in the answer and the search", () => {
    const state = freshState();
    const nowhere = { IPLOOKUP_STATE: "", XDG_STATE_HOME: join(dir, "nowhere"), HOME: join(dir, "nowhere") };
    const plain = JSON.parse(cli(["asn", "AS13335", "--json"], nowhere).stdout) as { num_ips: number; prefixes: string[] };
    expect(plain.prefixes).toContain("1.1.1.0/24");
    expect(cli(["corrections", "set", "1.1.1.0/24", "--asn", "4242420", "--as-name", "Lab Networks"], { IPLOOKUP_STATE: state }).code).toBe(0);
    const cloudflare = JSON.parse(cli(["asn", "13335", "--json", "--state", state]).stdout) as { num_ips: number; prefixes: string[] };
    expect(cloudflare.num_ips).toBe(plain.num_ips - 256);
    expect(cloudflare.prefixes).not.toContain("1.1.1.0/24");
    const moved = cli(["asn", "AS4242420"], { IPLOOKUP_STATE: state });
    expect(moved.code).toBe(0);
    expect(moved.stdout).toStartWith("AS4242420 Lab Networks (AU, Australia)\n");
    expect(moved.stdout).toContain("IPv4: 256 addresses in 1 prefix\n  1.1.1.0/24\n");
    expect(cli(["asn", "--search", "lab networks", "--state", state]).stdout).toMatch(/^ASN\s+COUNTRY\s+IPV4 ADDRESSES\s+NAME\nAS4242420\s+AU\s+256\s+Lab Networks\n$/);
    // Without the state, the data alone.
    expect(cli(["asn", "AS4242420"], nowhere).stdout).toBe("AS4242420: not in the data\n");
  });
});

describe("corrections are part of the state's copies", () => {
  test("backup carries them", () => {
    const state = freshState();
    expect(cli(["corrections", "set", "203.0.113.0/24", "--as-name", "Kept"], { IPLOOKUP_STATE: state }).code).toBe(0);
    const copy = join(dir, `backup-${files}.db`);
    expect(cli(["backup", copy, "--state", state]).code).toBe(0);
    expect(JSON.parse(cli(["corrections", "list", "--json", "--state", copy]).stdout)).toEqual(JSON.parse(cli(["corrections", "list", "--json", "--state", state]).stdout));
  });

  test.skipIf(!postgresAvailable)("state copy moves them to PostgreSQL and back", async () => {
    const state = freshState();
    expect(cli(["corrections", "set", "203.0.113.0/24", "--country", "NL", "--note", "ticket 7"], { IPLOOKUP_STATE: state }).code).toBe(0);
    expect(cli(["corrections", "set", "2001:db8:5::/48", "--relay", "true", "--service", "Relay"], { IPLOOKUP_STATE: state }).code).toBe(0);
    const url = await states.fresh();
    const there = cli(["state", "copy", "--from", state, "--to", url]);
    expect(there.code).toBe(0);
    expect(there.stdout).toContain(", 2 corrections and 2 audit entries from");
    const back = freshState();
    expect(cli(["state", "copy", "--from", url, "--to", back]).code).toBe(0);
    const original = JSON.parse(cli(["corrections", "list", "--json", "--state", state]).stdout);
    expect(JSON.parse(cli(["corrections", "list", "--json", "--state", url]).stdout)).toEqual(original);
    expect(JSON.parse(cli(["corrections", "list", "--json", "--state", back]).stdout)).toEqual(original);
    // A destination that holds corrections is refused unless replaced.
    const again = cli(["state", "copy", "--from", state, "--to", back]);
    expect(again.code).not.toBe(0);
    expect(cli(["state", "copy", "--from", state, "--to", back, "--replace"]).code).toBe(0);
  });
});

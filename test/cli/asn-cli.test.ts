import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { cli } from "../support/server-process.ts";
import { makeTestApp, type TestApp } from "../support/test-app.ts";

/** `iplookup asn`: offline, the same answers as GET /v1/asn/{asn} and GET /v1/asn?q= (CONTRACT §14). */

let t: TestApp;
let key: string;
beforeAll(async () => {
  t = await makeTestApp();
  key = (await t.issueKey("unlimited")).secret;
});
afterAll(() => t.close());

const api = async (path: string) => (await t.request("GET", path, { key })).text();

describe("iplookup asn", () => {
  test("--json prints the API's bytes, for an AS, an unknown AS and a search", async () => {
    for (const [args, path] of [
      [["asn", "AS13335", "--json"], "/v1/asn/AS13335"],
      [["asn", "2500", "--json"], "/v1/asn/2500"],
      [["asn", "as4199999999", "--json"], "/v1/asn/as4199999999"],
      [["asn", "--search", "Cloudflare", "--json"], "/v1/asn?q=Cloudflare"],
      [["asn", "--search", "AS1333", "--json"], "/v1/asn?q=AS1333"],
    ] as const) {
      const result = cli([...args]);
      expect({ args, code: result.code, stderr: result.stderr }).toEqual({ args, code: 0, stderr: "" });
      expect(result.stdout).toBe(`${await api(path)}\n`);
    }
  });

  test("for people: the AS, its counts and its prefixes; a search as a table", () => {
    const as = cli(["asn", "AS112"]);
    expect(as.code).toBe(0);
    expect(as.stdout).toBe(
      ["AS112 DNS-OARC (US, United States)", "hosting: no", "IPv4: 512 addresses in 2 prefixes", "  192.31.196.0/24", "  192.175.48.0/24", "IPv6: 2 prefixes", "  2001:4:112::/48", "  2620:4f:8000::/48", ""].join("\n"),
    );
    const search = cli(["asn", "--search", "DNS-OARC"]);
    expect(search.code).toBe(0);
    expect(search.stdout.split("\n")[0]).toMatch(/^ASN\s+COUNTRY\s+IPV4 ADDRESSES\s+NAME$/);
    expect(search.stdout).toContain("AS112");
    expect(cli(["asn", "4199999999"]).stdout).toBe("AS4199999999: not in the data\n");
  });

  test("for people: one address, one prefix, in the singular", () => {
    const env = { IPLOOKUP_STATE: join(t.dir, "one-address.db") };
    expect(cli(["corrections", "set", "1.2.3.4", "--asn", "4199999999"], env).code).toBe(0);
    const as = cli(["asn", "4199999999"], env);
    expect({ code: as.code, stderr: as.stderr }).toEqual({ code: 0, stderr: "" });
    expect(as.stdout.split("\n").slice(2, 5)).toEqual(["IPv4: 1 address in 1 prefix", "  1.2.3.4/32", "IPv6: 0 prefixes"]);
  });

  test("a bad or special-purpose AS number, or a bad search text: a message on stderr, exit 1, nothing on stdout", () => {
    for (const [args, message] of [
      [["asn", "AS-1"], "is not an AS number"],
      [["asn", "64512"], "AS64512 is not a public AS number (private-use)"],
      [["asn", "AS23456", "--json"], "(as-trans)"],
      [["asn", "--search", "x".repeat(65)], "it must have 1 to 64"],
      [["asn", "--search", ""], "it must have 1 to 64"],
    ] as const) {
      const result = cli([...args]);
      expect({ args, code: result.code, stdout: result.stdout }).toEqual({ args, code: 1, stdout: "" });
      expect(result.stderr).toContain(message);
    }
  });

  test("a bad search text's message names --search, the flag the user gave, not the API's q", () => {
    for (const [text, count] of [["", 0], ["x".repeat(65), 65]] as const) {
      const result = cli(["asn", "--search", text]);
      expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 1, stdout: "" });
      expect(result.stderr).toBe(`iplookup: --search: the search text has ${count} characters; it must have 1 to 64\n`);
    }
  });

  test("neither an AS nor --search, or both: exit 2", () => {
    expect(cli(["asn"]).code).toBe(2);
    expect(cli(["asn", "13335", "--search", "x"]).code).toBe(2);
    expect(cli(["asn", "13335", "15169"]).code).toBe(2);
  });
});

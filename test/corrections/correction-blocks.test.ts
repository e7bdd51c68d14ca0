import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultDataPath } from "../../src/config/paths.ts";
import { parseCorrectionBlock } from "../../src/corrections/correction-rules.ts";
import { runCliInProcess } from "../support/in-process-cli.ts";
import { adminAppOf, makeTestApp, type TestApp } from "../support/test-app.ts";

/**
 * A correction's block written as an IPv4-mapped address with a prefix under 96
 * (`::ffff:0:0/95`) is no block: refused saying what prefix a mapped address takes, in
 * the rule, the admin API and the command line; so are a key's allowed_cidrs and the
 * trusted proxies, which would otherwise take an IPv6 range nobody named.
 */

const REFUSED = '"::ffff:0:0/95" is not a CIDR block (an IPv4-mapped address (::ffff:a.b.c.d) takes a prefix of 96 to 128, the IPv4 block it carries)';

describe("a mapped address under /96", () => {
  test("the rule names the block of that prefix", () => {
    expect(() => parseCorrectionBlock("::ffff:0:0/95")).toThrow(REFUSED);
    expect(() => parseCorrectionBlock("::ffff:1.2.3.4/64")).toThrow('"::ffff:1.2.3.4/64" is not a CIDR block (an IPv4-mapped address');
    expect(parseCorrectionBlock("::ffff:1.1.1.0/120").cidr).toBe("1.1.1.0/24");
  });

  describe("the admin API and the command line say the same", () => {
    let t: TestApp;
    let token: string;
    const dir = mkdtempSync(join(tmpdir(), "iplookup-correction-blocks-"));
    beforeAll(async () => {
      t = await makeTestApp();
      token = (await t.store.createAdminToken("ops")).secret;
    });
    afterAll(async () => {
      await t.close();
      rmSync(dir, { recursive: true, force: true });
    });

    test("PUT /admin/v1/corrections/::ffff:0:0_95: 400 invalid_request naming the block, nothing written", async () => {
      const response = await adminAppOf(t).handle(
        new Request("http://admin/admin/v1/corrections/::ffff:0:0_95", {
          method: "PUT",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: JSON.stringify({ asn: 1 }),
        }),
      );
      expect({ status: response.status, body: await response.json() }).toMatchObject({ status: 400, body: { code: "invalid_request", detail: REFUSED } });
      expect(await t.store.listCorrections()).toEqual([]);
    });

    test("corrections set ::ffff:0:0/95: exit 2 with the same reason", async () => {
      const result = await runCliInProcess(defaultDataPath(), ["corrections", "set", "::ffff:0:0/95", "--asn", "1", "--state", join(dir, "state.db")]);
      expect(result).toEqual({ code: 2, stdout: "", stderr: `iplookup: ${REFUSED}\n` });
    });
  });
  test("a key's allowed_cidrs and --trust-proxy refuse it too, rather than take an IPv6 block nobody named", async () => {
    const dir = mkdtempSync(join(tmpdir(), "iplookup-mapped-prefix-"));
    try {
      const key = await runCliInProcess(defaultDataPath(), ["keys", "create", "--name", "c", "--allowed-cidrs", "::ffff:10.0.0.0/95", "--state", join(dir, "state.db")]);
      expect(key.code).toBe(2);
      expect(key.stderr).toContain('"::ffff:10.0.0.0/95" is not an IP address or CIDR block (an IPv4-mapped address (::ffff:a.b.c.d) takes a prefix of 96 to 128');
      const proxy = await runCliInProcess(defaultDataPath(), ["config", "check", "--trust-proxy", "::ffff:10.0.0.1/80", "--state", join(dir, "state.db")]);
      expect(proxy.code).toBe(2);
      expect(proxy.stderr).toContain('"::ffff:10.0.0.1/80" is not an address or CIDR block (an IPv4-mapped address');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

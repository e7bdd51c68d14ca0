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
 * (`::ffff:0:0/95`) is an IPv6 block with host bits set: refused as any such block is,
 * naming the block of that prefix, in the rule, the admin API and the command line.
 */

const HOST_BITS = "::ffff:0:0/95 has host bits set: the block of that prefix is ::fffe:0:0/95";

describe("a mapped address under /96", () => {
  test("the rule names the block of that prefix", () => {
    expect(() => parseCorrectionBlock("::ffff:0:0/95")).toThrow(HOST_BITS);
    expect(() => parseCorrectionBlock("::ffff:1.2.3.4/64")).toThrow("::ffff:1.2.3.4/64 has host bits set: the block of that prefix is ::/64");
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
      expect({ status: response.status, body: await response.json() }).toMatchObject({ status: 400, body: { code: "invalid_request", detail: HOST_BITS } });
      expect(await t.store.listCorrections()).toEqual([]);
    });

    test("corrections set ::ffff:0:0/95: exit 2 with the same reason", async () => {
      const result = await runCliInProcess(defaultDataPath(), ["corrections", "set", "::ffff:0:0/95", "--asn", "1", "--state", join(dir, "state.db")]);
      expect(result).toEqual({ code: 2, stdout: "", stderr: `iplookup: ${HOST_BITS}\n` });
    });
  });
});

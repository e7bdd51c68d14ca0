import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { postgresAvailable, testStates } from "../support/postgres.ts";
import { cli } from "../support/server-process.ts";

/**
 * Values that one store could keep and the other not are refused on both, by the same
 * rule, from the command line as from the admin API (whose tests hold it to the same):
 * so a SQLite state always copies to PostgreSQL.
 */
const dir = mkdtempSync(join(tmpdir(), "iplookup-limits-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const states = testStates();

function limits(fresh: () => Promise<string>) {
  test("plans set past a store's integers: exit 2 naming the limit, nothing made", async () => {
    const env = { IPLOOKUP_STATE: await fresh() };
    expect(cli(["plans", "set", "big", "--max-batch", "2147483648", "--monthly-units", "unlimited", "--rate-limit", "1"], env)).toMatchObject({
      code: 2,
      stderr: "iplookup: max_batch_size must be at most 2,147,483,647 (got 2147483648)\n",
    });
    expect(cli(["plans", "set", "big", "--max-batch", "1", "--monthly-units", "unlimited", "--rate-limit", "3000000000"], env)).toMatchObject({
      code: 2,
      stderr: "iplookup: rate_limit must be at most 2,147,483,647 (got 3000000000)\n",
    });
    expect(cli(["plans", "list", "--json"], env).stdout).not.toContain('"big"');
    const most = cli(["plans", "set", "most", "--max-batch", "2147483647", "--monthly-units", "9007199254740991", "--rate-limit", "2147483647"], env);
    expect(most.code).toBe(0);
    expect(cli(["plans", "set", "more", "--max-batch", "1", "--monthly-units", "9007199254740992", "--rate-limit", "1"], env)).toMatchObject({
      code: 2,
      stderr: "iplookup: --monthly-units: 9007199254740992 is too large (at most 9,007,199,254,740,991)\n",
    });
  });

  test("an expiry whose offset carries it past year 9999 in UTC: exit 2, nothing made", async () => {
    const env = { IPLOOKUP_STATE: await fresh() };
    expect(cli(["keys", "create", "--name", "last", "--expires-at", "9999-12-31T23:59:59Z"], env).code).toBe(0);
    expect(cli(["keys", "create", "--name", "far", "--expires-at", "9999-12-31T23:59:59-23:59"], env)).toMatchObject({
      code: 2,
      stderr: "iplookup: --expires-at: 9999-12-31T23:59:59-23:59 is after 9999-12-31T23:59:59Z in UTC\n",
    });
    expect((JSON.parse(cli(["keys", "list", "--json"], env).stdout) as { name: string }[]).map((key) => key.name)).toEqual(["last"]);
  });
}

describe("on a SQLite state file", () => limits(async () => join(dir, `state-${++files}.db`)));
describe.skipIf(!postgresAvailable)("on PostgreSQL", () => limits(states.fresh));

import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cli } from "../support/server-process.ts";
import { makeTestApp } from "../support/test-app.ts";

/** Counts in what iplookup says read as English: one of a thing is not "1 things". */

const dir = mkdtempSync(join(tmpdir(), "iplookup-counted-words-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("plans set: a plan of 1 unit a month and 1 request a second says so", () => {
  const set = cli(["plans", "set", "solo", "--max-batch", "1", "--monthly-units", "1", "--rate-limit", "1"], { IPLOOKUP_STATE: join(dir, "plans.db") });
  expect(set).toEqual({ code: 0, stdout: "Plan solo: max batch 1, 1 unit a month, 1 request a second.\n", stderr: "" });
  const more = cli(["plans", "set", "solo", "--monthly-units", "2", "--rate-limit", "unlimited"], { IPLOOKUP_STATE: join(dir, "plans.db") });
  expect(more.stdout).toBe("Plan solo: max batch 1, 2 units a month, unlimited requests a second.\n");
});

test("429 rate_limited on a plan of 1 request a second", async () => {
  const app = await makeTestApp();
  try {
    await app.store.setPlan("one", { maxBatchSize: 10, monthlyUnits: 1000, rateLimit: 1 });
    const key = (await app.issueKey("one")).secret;
    expect((await app.request("POST", "/v1/lookup", { key, body: { ip: "1.1.1.1" } })).status).toBe(200);
    const over = await app.request("POST", "/v1/lookup", { key, body: { ip: "1.1.1.1" } });
    expect(over.status).toBe(429);
    expect(((await over.json()) as { detail: string }).detail).toBe("this key's plan allows 1 request a second");
  } finally {
    await app.close();
  }
});

test("state copy names the webhooks and the audit log it copied", () => {
  const from = join(dir, "from.db");
  const env = { IPLOOKUP_STATE: from };
  expect(cli(["keys", "create", "--name", "web"], env).code).toBe(0);
  expect(cli(["webhooks", "add", "http://127.0.0.1:9/hook", "--events", "key.created"], env).code).toBe(0);
  const to = join(dir, "to.db");
  const copied = cli(["state", "copy", "--from", from, "--to", to]);
  expect(copied).toEqual({
    code: 0,
    stdout: `Copied 3 plans, 1 key, 0 monthly usage rows (0 units), 0 daily usage rows, 0 admin tokens, 1 webhook and 2 audit entries from ${from} to ${to}.\n`,
    stderr: "",
  });
});

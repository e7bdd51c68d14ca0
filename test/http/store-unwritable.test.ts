import type { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { createLogger } from "../../src/log/logger.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { damageTable } from "../support/damaged-state.ts";
import { fillStateFile } from "../support/full-state.ts";
import { makeTestApp } from "../support/test-app.ts";

test("a state file that cannot be written (a full disk): charged requests answer 503 store_unavailable with Retry-After, cost nothing, log no error", async () => {
  const lines: string[] = [];
  const t = await makeTestApp({ logger: createLogger("debug", (line) => lines.push(line)) });
  try {
    const { key, secret } = await t.issueKey("free");
    fillStateFile(t.store, key.id);
    const single = await t.request("POST", "/v1/lookup", { key: secret, body: { ip: "8.8.8.8" } });
    const batch = await t.request("POST", "/v1/lookup/batch", { key: secret, body: { ips: ["8.8.8.8", "1.1.1.1"] } });
    for (const response of [single, batch]) {
      expect(response.status).toBe(503);
      expect(response.headers.get("retry-after")).toBe("2");
      expect(response.headers.get("content-type")).toStartWith("application/problem+json");
      const body = (await response.json()) as { code: string; detail: string };
      expect(body.code).toBe("store_unavailable");
      expect(body.detail).toContain("nothing was charged");
      // Not "cannot reach": the store answers, and refuses to be written.
      expect(body.detail).toContain("cannot write to it");
    }
    expect(await t.store.unitsUsed(key.id, "2026-11")).toBe(0);
    // Routes that do not write still answer.
    const usage = await t.request("GET", "/v1/usage", { key: secret });
    expect(usage.status).toBe(200);
    expect(((await usage.json()) as { units: { used: number } }).units.used).toBe(0);
    expect(lines.filter((line) => line.includes('"level":"error"'))).toEqual([]);
  } finally {
    await t.close();
  }
});

test("a damaged state file (SQLITE_CORRUPT): charges and /v1/usage answer 503 store_unavailable and cost nothing, the damage logged once, no 500", async () => {
  const lines: string[] = [];
  let secret = "";
  const t = await makeTestApp({
    logger: createLogger("debug", (line) => lines.push(line)),
    async prepareState(path) {
      const store = SqliteStore.open(path);
      secret = (await store.createKey("k", "free")).secret;
      await store.close();
      damageTable(path, "usage");
    },
  });
  try {
    const answers = [
      await t.request("POST", "/v1/lookup", { key: secret, body: { ip: "8.8.8.8" } }),
      await t.request("POST", "/v1/lookup/batch", { key: secret, body: { ips: ["8.8.8.8", "1.1.1.1"] } }),
      await t.request("GET", "/v1/usage", { key: secret }),
      await t.request("GET", "/v1/usage", { key: secret }),
    ];
    for (const response of answers) {
      expect(response.status).toBe(503);
      expect(response.headers.get("retry-after")).toBe("2");
      expect(((await response.json()) as { code: string }).code).toBe("store_unavailable");
    }
    // Rolled back: no day of usage written either (the usage table itself cannot be read).
    expect((t.store as unknown as { db: Database }).db.query("SELECT count(*) AS n FROM usage_days").get()).toEqual({ n: 0 });
    expect(lines.filter((line) => line.includes("unhandled error"))).toEqual([]);
    const errors = lines.filter((line) => line.includes('"level":"error"')).map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(errors).toMatchObject([
      {
        msg: "the state file cannot be read; the requests that read it answer 503 store_unavailable until it is fixed",
        error: "the state file is damaged (SQLITE_CORRUPT): restore it from a backup (docs/backups.md)",
      },
    ]);
  } finally {
    await t.close();
  }
});

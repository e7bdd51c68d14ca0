import { expect, test } from "bun:test";
import { createLogger } from "../../src/log/logger.ts";
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

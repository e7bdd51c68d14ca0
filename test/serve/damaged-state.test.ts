import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, truncateSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultDataPath } from "../../src/config/paths.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { damageTable } from "../support/damaged-state.ts";
import { runCliInProcess } from "../support/in-process-cli.ts";
import { startSocketServer } from "../support/in-process-server.ts";

const root = mkdtempSync(join(tmpdir(), "iplookup-damaged-state-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let count = 0;

/** A state file with one key (its secret returned), in a folder of its own. */
async function stateWithKey(): Promise<{ path: string; secret: string }> {
  const path = join(root, `s${++count}`, "state.db");
  const store = SqliteStore.open(path);
  const { secret } = await store.createKey("k", "free");
  await store.close();
  return { path, secret };
}

describe("a server whose state file is damaged", () => {
  test("answers charged requests 503 store_unavailable, logs the damage with the file and the remedy, stays ready", async () => {
    const { path, secret } = await stateWithKey();
    damageTable(path, "usage");
    const server = await startSocketServer({ state: path, workers: "1" });
    try {
      const lookup = await fetch(new URL("/v1/lookup", server.url), {
        method: "POST",
        headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
        body: JSON.stringify({ ip: "8.8.8.8" }),
      });
      expect(lookup.status).toBe(503);
      expect(((await lookup.json()) as { code: string }).code).toBe("store_unavailable");
      // As for a state file that cannot be written: the server is there, its store is not lost.
      expect((await fetch(new URL("/readyz", server.url))).status).toBe(200);
      const lines = server.logs.flatMap((text) => text.split("\n")).filter((line) => line.startsWith("{"));
      expect(lines.filter((line) => line.includes("unhandled error"))).toEqual([]);
      expect(lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.level === "error")).toMatchObject([
        {
          msg: "the state file is damaged; charged requests answer 503 store_unavailable until it is restored",
          state: path,
          error: `the state file ${path} is damaged (SQLITE_CORRUPT): restore it from a backup (docs/backups.md)`,
          refused: 1,
        },
      ]);
    } finally {
      await server.close();
    }
  });
});

describe("a state file cut short", () => {
  test("serve and the commands that read or write it name the file and the remedy, exit 1", async () => {
    const { path } = await stateWithKey();
    truncateSync(path, 50_000);
    for (const args of [["keys", "list"], ["usage"], ["keys", "create", "--name", "k2"], ["serve", "--host", "127.0.0.1", "--port", "0", "--admin-port", "off", "--workers", "1"]]) {
      const { code, stderr } = await runCliInProcess(defaultDataPath(), [...args, "--state", path]);
      expect({ args, stderr }).toEqual({ args, stderr: `iplookup: the state file ${path} is damaged (SQLITE_CORRUPT): restore it from a backup (docs/backups.md)\n` });
      expect(code).toBe(1);
    }
  });
});

import { afterAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { startServerProcess, type ServerProcess } from "../support/server-process.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-crash-"));
const state = join(dir, "state.db");
let server: ServerProcess | undefined;
afterAll(async () => {
  await server?.stop("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

test("SIGKILL under load loses no unit of an answered request", async () => {
  const store = SqliteStore.open(state);
  const { key, secret } = await store.createKey("load", "unlimited");
  await store.close();
  server = await startServerProcess(["--state", state]);
  const url = server.url;

  let answeredUnits = 0;
  let stop = false;
  const worker = async (n: number) => {
    const batch = Array.from({ length: 1 + (n % 5) * 10 }, (_, i) => `1.${n}.${i}.1`);
    while (!stop) {
      try {
        const response = await fetch(`${url}/v1/lookup/batch`, {
          method: "POST",
          headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
          body: JSON.stringify({ ips: batch }),
        });
        if (response.status === 200) {
          await response.arrayBuffer();
          answeredUnits += Number(response.headers.get("x-units-consumed"));
        }
      } catch {
        return; // the server is gone
      }
    }
  };
  const workers = Array.from({ length: 16 }, (_, n) => worker(n));
  await Bun.sleep(1500);
  server.process.kill("SIGKILL");
  await server.process.exited;
  stop = true;
  await Promise.all(workers);
  server = undefined;
  expect(answeredUnits).toBeGreaterThan(100);

  const db = new Database(state);
  expect(db.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
  db.close();
  const reopened = SqliteStore.open(state);
  const used = await reopened.unitsUsed(key.id, new Date().toISOString().slice(0, 7));
  await reopened.close();
  expect(used).toBeGreaterThanOrEqual(answeredUnits);
  // Units beyond the answered ones belong to requests in flight at the kill: one per worker at most.
  expect(used).toBeLessThanOrEqual(answeredUnits + 16 * 41);

  // The server starts again cleanly on the same file.
  server = await startServerProcess(["--state", state]);
  expect(await server.stop("SIGTERM")).toBe(0);
  server = undefined;
});

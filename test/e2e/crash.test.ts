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

const ROUNDS = 6;
const WORKERS = 16;
const LARGEST_BATCH = 41;

/** Mixed load until the server dies: batches, single lookups, usage reads and bad requests. Returns the units of answered requests. */
async function load(url: string, secret: string, until: () => boolean, progress: { answered: number } = { answered: 0 }): Promise<number> {
  const worker = async (n: number) => {
    const batch = Array.from({ length: 1 + (n % 5) * 10 }, (_, i) => `1.${n}.${i}.1`);
    for (let i = 0; !until(); i++) {
      const kind = (n + i) % 4;
      const body = kind === 0 ? { ip: "8.8.8.8" } : kind === 3 ? { ips: ["10.0.0.1", ...batch] } : { ips: batch };
      try {
        const response = await fetch(`${url}/v1/lookup${kind === 0 ? "" : "/batch"}`, {
          method: "POST",
          headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
          body: JSON.stringify(body),
        });
        await response.arrayBuffer();
        if (response.status === 200) progress.answered += Number(response.headers.get("x-units-consumed"));
      } catch {
        return; // the server is gone
      }
    }
  };
  await Promise.all(Array.from({ length: WORKERS }, (_, n) => worker(n)));
  return progress.answered;
}

test(`SIGKILL at random moments under mixed load, ${ROUNDS} times, loses no unit of an answered request`, async () => {
  const store = SqliteStore.open(state);
  const { key, secret } = await store.createKey("load", "unlimited");
  await store.close();
  const period = new Date().toISOString().slice(0, 7);
  let answeredTotal = 0;
  for (let round = 0; round < ROUNDS; round++) {
    server = await startServerProcess(["--state", state, "--log-level", "warn"]);
    if (round === 0) await Bun.sleep(600); // the key, created before start, is known at once; give the first round a warm-up
    let dead = false;
    const progress = { answered: 0 };
    const running = load(server.url, secret, () => dead, progress);
    // The random moment counts from the first answer: on a busy machine the server may
    // take longer than the moment itself to answer anything.
    const waited = Date.now();
    while (progress.answered === 0 && Date.now() - waited < 15_000) await Bun.sleep(10);
    await Bun.sleep(300 + Math.floor(Math.random() * 900));
    server.process.kill("SIGKILL");
    await server.process.exited;
    dead = true;
    const answered = await running;
    server = undefined;
    expect(answered).toBeGreaterThan(0);
    answeredTotal += answered;

    const db = new Database(state);
    expect(db.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
    db.close();
    const reopened = SqliteStore.open(state);
    const used = await reopened.unitsUsed(key.id, period);
    await reopened.close();
    expect(used).toBeGreaterThanOrEqual(answeredTotal);
    // Units beyond the answered ones belong to requests in flight at a kill: one per worker at most, each round.
    expect(used).toBeLessThanOrEqual(answeredTotal + (round + 1) * WORKERS * LARGEST_BATCH);
  }

  // The server starts again cleanly on the same file.
  server = await startServerProcess(["--state", state]);
  expect(await server.stop("SIGTERM")).toBe(0);
  server = undefined;
}, 60_000);

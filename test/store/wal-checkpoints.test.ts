import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { runWalCheckpoints } from "../../src/store/wal-checkpoints.ts";
import type { Store } from "../../src/store/store.ts";
import { startSocketServer } from "../support/in-process-server.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-wal-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * What the WAL index (the -shm file; sqlite.org/walformat.html) says: `mxFrame`, the
 * frames in the WAL (u32 at byte 16 of the header), and `nBackfill`, how many of them
 * a checkpoint has copied into the database (u32 at byte 96). Both in the machine's
 * byte order. Read from the file, not through SQLite, which would checkpoint to answer.
 */
function walIndex(path: string): { frames: number; copied: number } {
  const bytes = readFileSync(`${path}-shm`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return { frames: view.getUint32(16, true), copied: view.getUint32(96, true) };
}

/** The -wal file's length in bytes (0 when there is none). */
function walBytes(path: string): number {
  return existsSync(`${path}-wal`) ? statSync(`${path}-wal`).size : 0;
}

const SQLITE_STORE = join(import.meta.dir, "..", "..", "src", "store", "sqlite-store.ts");

/**
 * A process that charges `keyId` `count` times through a store opened as a server's
 * serving thread opens it (no automatic checkpoints, lock waits retried by the group
 * commit), two charges in flight, so its commits follow each other without a pause.
 */
function chargingProcess(path: string, keyId: string, count: number) {
  const code = `
    const { SqliteStore } = await import(${JSON.stringify(SQLITE_STORE)});
    const store = SqliteStore.open(${JSON.stringify(path)}, { walAutoCheckpoint: false, lockWaitMs: 10000 });
    let left = ${count};
    const loop = async () => { while (left-- > 0) await store.charge({ keyId: ${JSON.stringify(keyId)}, period: "2026-11", units: 1, limit: null }); };
    await Promise.all(Array.from({ length: 2 }, loop));
    await store.close();`;
  return Bun.spawn([process.execPath, "-e", code], { stdout: "inherit", stderr: "inherit" });
}

/** A process that reads the usage in short read transactions, one every millisecond, until it is killed. */
function readingProcess(path: string) {
  const code = `
    const { Database } = await import("bun:sqlite");
    const db = new Database(${JSON.stringify(path)}, { readonly: true });
    const read = db.query("SELECT sum(used) AS used FROM usage");
    for (;;) { read.get(); Bun.sleepSync(1); }`;
  return Bun.spawn([process.execPath, "-e", code], { stdout: "inherit", stderr: "inherit" });
}

/** `count` charges, each committed on its own (one group commit a turn). */
async function chargeOneByOne(store: Store, count: number): Promise<void> {
  const { key } = await store.createKey("wal", "unlimited");
  for (let i = 0; i < count; i++) await store.charge({ keyId: key.id, period: "2026-11", units: 1, limit: null });
}

describe("the WAL's checkpoints", () => {
  test("a connection opened with walAutoCheckpoint false never checkpoints; SQLite's default does past 1,000 pages", async () => {
    const automatic = join(dir, "automatic.db");
    const left = join(dir, "left.db");
    const stores = [SqliteStore.open(automatic), SqliteStore.open(left, { walAutoCheckpoint: false })];
    for (const store of stores) await chargeOneByOne(store, 800);
    const byDefault = walIndex(automatic);
    const leftAlone = walIndex(left);
    // Left alone: every commit's pages are still in the WAL, none copied.
    expect(leftAlone.frames).toBeGreaterThan(1200);
    expect(leftAlone.copied).toBe(0);
    // By default the WAL was checkpointed at 1,000 frames and started again.
    expect(byDefault.frames).toBeLessThan(1100);
    for (const store of stores) await store.close();
  });

  test("runWalCheckpoints copies the WAL into the file while a store writes, and the WAL starts again instead of growing", async () => {
    const path = join(dir, "checkpointed.db");
    const store = SqliteStore.open(path, { walAutoCheckpoint: false });
    const errors: unknown[] = [];
    const checkpoints = runWalCheckpoints(path, 2, (error) => errors.push(error));
    await chargeOneByOne(store, 800);
    await Bun.sleep(20);
    const index = walIndex(path);
    expect(index.copied).toBe(index.frames);
    expect(index.frames).toBeLessThan(1000);
    checkpoints.stop();
    await store.close();
    expect(errors).toEqual([]);
  });

  test("a server's state file is checkpointed by its own thread, soon after the charges, not once the WAL is 1,000 pages long", async () => {
    const server = await startSocketServer({ workers: "2" });
    try {
      const cli = SqliteStore.open(server.statePath);
      const { secret } = await cli.createKey("wal", "unlimited");
      await cli.close();
      // Fewer commits than SQLite's own threshold would checkpoint at.
      for (let i = 0; i < 60; i++) {
        const response = await fetch(`${server.url}v1/lookup`, { method: "POST", headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" }, body: JSON.stringify({ ip: "1.1.1.1" }) });
        expect(response.status).toBe(200);
      }
      const deadline = Date.now() + 3000;
      let index = walIndex(server.statePath);
      while (index.copied < index.frames && Date.now() < deadline) {
        await Bun.sleep(50);
        index = walIndex(server.statePath);
      }
      expect(index.frames).toBeGreaterThan(0);
      expect(index.frames).toBeLessThan(1000);
      expect(index.copied).toBe(index.frames);
    } finally {
      await server.close();
    }
  });

  test("a server's /metrics tells what its checkpoint thread did: passive checkpoints after charges, then the idle WAL emptied", async () => {
    const server = await startSocketServer({ workers: "2" });
    const sample = (text: string, name: string) => Number(new RegExp(`^${name.replace(/[{}]/g, "\\$&")} (\\S+)$`, "m").exec(text)?.[1]);
    try {
      const cli = SqliteStore.open(server.statePath);
      const { secret } = await cli.createKey("wal-metrics", "unlimited");
      await cli.close();
      for (let i = 0; i < 40; i++) {
        const response = await fetch(`${server.url}v1/lookup`, { method: "POST", headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" }, body: JSON.stringify({ ip: "1.1.1.1" }) });
        expect(response.status).toBe(200);
      }
      const deadline = Date.now() + 6000;
      let text = "";
      do {
        await Bun.sleep(100);
        text = await (await fetch(`${server.url}metrics`)).text();
      } while (!(sample(text, 'iplookup_state_wal_checkpoints_total{mode="truncate"}') >= 1) && Date.now() < deadline);
      expect(sample(text, 'iplookup_state_wal_checkpoints_total{mode="passive"}')).toBeGreaterThanOrEqual(2);
      expect(sample(text, 'iplookup_state_wal_checkpoints_total{mode="truncate"}')).toBeGreaterThanOrEqual(1);
      expect(sample(text, 'iplookup_state_wal_checkpoints_total{mode="restart"}')).toBe(0);
      // Not always 0: each serving thread reads the state's change counter every tick, and a
      // TRUNCATE (or RESTART) that meets such a read gives up after 3 ms, counted as busy.
      // The metric is there, a count.
      const busy = sample(text, "iplookup_state_wal_checkpoints_busy_total");
      expect({ busy, count: Number.isSafeInteger(busy) && busy >= 0 }).toEqual({ busy, count: true });
      expect(sample(text, "iplookup_state_wal_checkpoint_longest_seconds")).toBeGreaterThan(0);
      expect(sample(text, "iplookup_state_wal_bytes")).toBe(0);
      expect(walBytes(server.statePath)).toBe(0);
      // Said once, by the main thread, however many threads serve.
      expect(text.match(/^# TYPE iplookup_state_wal_bytes gauge$/gm)).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  test("under writes from two processes that never pause, with a reader, the WAL starts again instead of growing, and is emptied once idle", async () => {
    const path = join(dir, "busy.db");
    const setup = SqliteStore.open(path, { walAutoCheckpoint: false });
    const { key } = await setup.createKey("busy", "unlimited");
    await setup.close();
    const errors: unknown[] = [];
    // As a server's thread runs them, more often and with a smaller WAL, so that the
    // test's few seconds see many intervals.
    const checkpoints = runWalCheckpoints(path, 5, (error) => errors.push(error), { restartAfterBytes: 1024 * 1024 });
    let longest = 0;
    const sampler = setInterval(() => (longest = Math.max(longest, walBytes(path))), 5);
    const reader = readingProcess(path);
    const perWriter = 40_000;
    try {
      const writers = [chargingProcess(path, key.id, perWriter), chargingProcess(path, key.id, perWriter)];
      expect(await Promise.all(writers.map((writer) => writer.exited))).toEqual([0, 0]);
    } finally {
      clearInterval(sampler);
      reader.kill();
      await reader.exited;
    }
    longest = Math.max(longest, walBytes(path));
    // Left to PASSIVE checkpoints alone, each copying every frame it finds, the WAL grew
    // with most commits: 91–92 MB for these 80,000 (it restarts only when the writers
    // happen to pause). Restarted: 6.5–11 MB, 14 MB once on a busy machine.
    expect(longest).toBeLessThan(32 * 1024 * 1024);
    expect(checkpoints.stats.restarts).toBeGreaterThan(0);
    // Idle now: the next checkpoints find the WAL all copied and unchanged, and empty it.
    for (let i = 0; i < 200 && walBytes(path) > 0; i++) await Bun.sleep(10);
    expect(walBytes(path)).toBe(0);
    expect(checkpoints.stats.truncations).toBeGreaterThan(0);
    checkpoints.stop();
    expect(errors).toEqual([]);
    // Nothing committed was lost on the way.
    const store = SqliteStore.open(path);
    expect(await store.unitsUsed(key.id, "2026-11")).toBe(2 * perWriter);
    await store.close();
  });
});

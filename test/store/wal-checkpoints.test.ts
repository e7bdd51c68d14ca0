import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
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
});

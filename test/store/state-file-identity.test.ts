import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { StateFileChangedError, StateFileIdentity } from "../../src/store/state-file-identity.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { StoreUnavailableError } from "../../src/store/store.ts";
import { runWalCheckpoints } from "../../src/store/wal-checkpoints.ts";
import { tempStatePaths } from "./temp-state.ts";

const nextPath = tempStatePaths();
const PERIOD = "2026-11";
const SQLITE_STORE = join(import.meta.dir, "..", "..", "src", "store", "sqlite-store.ts");

/** A store on a new file with one key that has one unit charged. */
async function storeWithCharge(path: string, options: Parameters<typeof SqliteStore.open>[1] = {}) {
  const store = SqliteStore.open(path, options);
  const { key } = await store.createKey("a", "unlimited");
  expect((await store.charge({ keyId: key.id, period: PERIOD, units: 1, limit: null })).ok).toBe(true);
  return { store, keyId: key.id };
}

/** Stands for files another process made under the names after they were removed. */
function othersFiles(path: string): void {
  for (const file of [`${path}-wal`, `${path}-shm`]) writeFileSync(file, "another process's");
}

describe("a SQLite state file changed under an open store", () => {
  test("the -wal and -shm removed: found at the next read of the change counter; from then on nothing is read, written or charged, and the close leaves the files now at those names", async () => {
    const path = nextPath();
    const { store, keyId } = await storeWithCharge(path, { walAutoCheckpoint: false, lockWaitMs: 2000 });
    rmSync(`${path}-wal`);
    rmSync(`${path}-shm`);
    othersFiles(path);

    const changed = await store.generation().catch((error: unknown) => error);
    expect(changed).toBeInstanceOf(StateFileChangedError);
    expect(changed).toBeInstanceOf(StoreUnavailableError);
    expect((changed as Error).message).toBe(`${path}-wal and ${path}-shm were replaced by other files while in use`);
    // The same answer from then on, whatever is asked.
    await expect(store.charge({ keyId, period: PERIOD, units: 1, limit: null })).rejects.toBe(changed);
    await expect(store.createKey("b", "free")).rejects.toBe(changed);
    await expect(store.listKeys()).rejects.toBe(changed);
    await expect(store.findActiveKey("0".repeat(64))).rejects.toBe(changed);
    await expect(store.unitsUsed(keyId, PERIOD)).rejects.toBe(changed);
    await expect(store.webhooks.listWebhooks()).rejects.toBe(changed);

    await store.close();
    // SQLite's close would have deleted them by name, another process's WAL with them.
    for (const file of [`${path}-wal`, `${path}-shm`]) expect(readFileSync(file, "utf8")).toBe("another process's");
  });

  test("the -wal and -shm removed while another process writes through its own: the close copies nothing of the old WAL into the file, which stays whole, with both processes' keys", async () => {
    const path = nextPath();
    const setup = SqliteStore.open(path);
    const keys = [];
    for (let i = 0; i < 300; i++) keys.push((await setup.createKey(`before-${i}`, "unlimited")).key.id);
    await setup.close();
    const store = SqliteStore.open(path, { walAutoCheckpoint: false, lockWaitMs: 2000 });
    rmSync(`${path}-wal`);
    rmSync(`${path}-shm`);
    // Charged before any look at the files: new usage rows, new pages, in the old WAL only.
    await Promise.all(keys.map((keyId) => store.charge({ keyId, period: PERIOD, units: 1, limit: null })));
    const other = Bun.spawn([process.execPath, "-e", `
      const { SqliteStore } = await import(${JSON.stringify(SQLITE_STORE)});
      const store = SqliteStore.open(${JSON.stringify(path)});
      for (let i = 0; i < 300; i++) await store.createKey("after-" + i, "free");
      await store.close();`], { stdout: "inherit", stderr: "inherit" });
    expect(await other.exited).toBe(0);
    await store.close();

    const db = new Database(path, { readonly: true });
    try {
      expect(db.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
      expect(db.query("SELECT count(*) AS n FROM keys").get()).toEqual({ n: 600 });
      // The units went into a WAL nobody else saw: lost, not mixed into the file.
      expect(db.query("SELECT count(*) AS n FROM usage").get()).toEqual({ n: 0 });
    } finally {
      db.close();
    }
  }, 30_000);

  test("a store that does not poll (the admin listener's, the webhooks') finds the change itself when used, a quarter second later at most", async () => {
    const path = nextPath();
    const { store } = await storeWithCharge(path);
    rmSync(`${path}-wal`);
    rmSync(`${path}-shm`);
    await Bun.sleep(300);
    const refused = await store.createKey("b", "free").catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(StateFileChangedError);
    expect((refused as Error).message).toBe(`${path}-wal and ${path}-shm were removed while in use`);
    await store.close();
  });

  test("charges queued when the close finds the files changed are refused, not written", async () => {
    const path = nextPath();
    const { store, keyId } = await storeWithCharge(path, { walAutoCheckpoint: false, lockWaitMs: 2000 });
    rmSync(`${path}-wal`);
    rmSync(`${path}-shm`);
    const queued = store.charge({ keyId, period: PERIOD, units: 1, limit: null });
    await store.close();
    expect(await queued.catch((error: unknown) => error)).toBeInstanceOf(StateFileChangedError);
  });

  test("the state file moved away, or another moved over it: told as such; a store left alone keeps working", async () => {
    const moved = nextPath();
    const kept = nextPath();
    const stores = [SqliteStore.open(moved), SqliteStore.open(kept)];
    renameSync(moved, `${moved}.away`);
    await expect(stores[0]!.generation()).rejects.toThrow(`${moved} was removed while in use`);
    expect(await stores[1]!.generation()).toMatchObject({ count: expect.any(Number) });
    for (const store of stores) await store.close();

    const replaced = nextPath();
    const store = SqliteStore.open(replaced);
    const otherPath = nextPath();
    await SqliteStore.open(otherPath).close();
    renameSync(otherPath, replaced);
    await expect(store.generation()).rejects.toThrow(`${replaced} was replaced by another file while in use`);
    await store.close();
  });

  test("the state file replaced, and its old -wal and -shm already removed (by another thread's removeLeftovers): the file alone is told", async () => {
    const replaced = nextPath();
    const store = SqliteStore.open(replaced);
    const otherPath = nextPath();
    await SqliteStore.open(otherPath).close();
    renameSync(otherPath, replaced);
    rmSync(`${replaced}-wal`);
    rmSync(`${replaced}-shm`);
    const refused = await store.generation().catch((error: unknown) => error);
    expect((refused as Error).message).toBe(`${replaced} was replaced by another file while in use`);
    await store.close();
  });
});

describe("StateFileIdentity.removeLeftovers", () => {
  test("once the state file is gone from its path, removes the -wal and -shm that were its own, not a file made since", async () => {
    const path = nextPath();
    const store = SqliteStore.open(path);
    const identity = StateFileIdentity.of(path);
    // While the state file is the one opened, nothing is removed.
    identity.removeLeftovers();
    expect(existsSync(`${path}-wal`) && existsSync(`${path}-shm`)).toBe(true);
    rmSync(path);
    rmSync(`${path}-shm`);
    writeFileSync(`${path}-shm`, "another process's");
    identity.removeLeftovers();
    expect(existsSync(`${path}-wal`)).toBe(false);
    expect(readFileSync(`${path}-shm`, "utf8")).toBe("another process's");
    await store.close();
  });
});

describe("a server's checkpoints of a state file changed under it", () => {
  test("the -wal and -shm removed: no checkpoint runs again, and the stop removes nothing", async () => {
    const path = nextPath();
    const { store } = await storeWithCharge(path, { walAutoCheckpoint: false });
    const errors: unknown[] = [];
    const checkpoints = runWalCheckpoints(path, 5, (error) => errors.push(error));
    await Bun.sleep(30);
    const ran = checkpoints.stats.passive;
    expect(ran).toBeGreaterThan(0);
    rmSync(`${path}-wal`);
    rmSync(`${path}-shm`);
    othersFiles(path);
    await Bun.sleep(50);
    expect(checkpoints.stats.passive).toBeLessThanOrEqual(ran + 1);
    const after = checkpoints.stats.passive;
    await Bun.sleep(30);
    expect(checkpoints.stats.passive).toBe(after);
    checkpoints.stop();
    await store.close();
    for (const file of [`${path}-wal`, `${path}-shm`]) expect(readFileSync(file, "utf8")).toBe("another process's");
    expect(errors).toEqual([]);
  });

  test("the state file moved away: its -wal and -shm are removed, so that a file put at the path is not read through them", async () => {
    const path = nextPath();
    const { store } = await storeWithCharge(path, { walAutoCheckpoint: false });
    const checkpoints = runWalCheckpoints(path, 5, () => {});
    renameSync(path, `${path}.away`);
    await Bun.sleep(50);
    expect(existsSync(`${path}-wal`)).toBe(false);
    expect(existsSync(`${path}-shm`)).toBe(false);
    checkpoints.stop();
    await store.close();
  });
});

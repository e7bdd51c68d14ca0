import { expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { KeyCache } from "../../src/access/key-cache.ts";
import { parseAddress } from "../../src/address/parse.ts";
import { CorrectionCache } from "../../src/corrections/correction-cache.ts";
import { followStoreChanges, type FollowsStore } from "../../src/serve/store-changes.ts";
import { PostgresStore } from "../../src/store/postgres-store.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import type { Generation, Store } from "../../src/store/store.ts";
import { postgresAvailable, testStates } from "../support/postgres.ts";
import { tempStatePaths } from "../store/temp-state.ts";

const freshPath = tempStatePaths();
const states = testStates();
const POLL_MS = 10;

/** Waits until `done()` holds, for at most two seconds. */
async function until(done: () => boolean): Promise<void> {
  for (let waited = 0; !done() && waited < 2000; waited += 5) await Bun.sleep(5);
  expect(done()).toBe(true);
}

/** A record of what the poll reported. */
function reports() {
  const failures: { error: unknown; follower: string | undefined }[] = [];
  let reached = 0;
  return {
    failures,
    reachedCount: () => reached,
    reached: () => void reached++,
    failed: (error: unknown, follower: string | undefined) => void failures.push({ error, follower }),
  };
}

test("a key and a correction made by another connection reach both caches, from one read of the counter a poll", async () => {
  const path = freshPath();
  const writer = SqliteStore.open(path);
  const reader = SqliteStore.open(path);
  const keys = await KeyCache.load(reader);
  const corrections = await CorrectionCache.load(reader);
  // Every read of the counter on this connection, the caches' own included.
  let counterReads = 0;
  const readCounter = reader.generation.bind(reader);
  reader.generation = () => (counterReads++, readCounter());
  const seen = reports();
  const changes = followStoreChanges(reader, { keys, corrections }, POLL_MS, seen);
  try {
    const issued = await writer.createKey("reader", "free");
    await writer.putCorrection("192.0.2.0/24", { asn: 64500 }, null);
    await until(() => keys.authenticate(issued.secret) !== null && corrections.current() !== null);
    expect(corrections.current()?.at(parseAddress("192.0.2.9")!).fields).toEqual({ asn: 64500 });
    const polls = seen.reachedCount();
    expect(polls).toBeGreaterThan(0);
    // Every successful poll read the counter once, for both caches (a poll in flight may have read it without reporting yet).
    expect(counterReads - polls).toBeGreaterThanOrEqual(0);
    expect(counterReads - polls).toBeLessThanOrEqual(1);
    expect(seen.failures).toEqual([]);
  } finally {
    changes.stop();
    await reader.close();
    await writer.close();
  }
});

test("a cache that fails to reload is reported by name and the others still reload; a counter that cannot be read is reported without a name", async () => {
  const path = freshPath();
  const writer = SqliteStore.open(path);
  const reader = SqliteStore.open(path);
  const corrections = await CorrectionCache.load(reader);
  const broken: FollowsStore = { refresh: () => Promise.reject(new Error("snapshot unreadable")) };
  const seen = reports();
  let counterFails = false;
  const store = { generation: () => (counterFails ? Promise.reject(new Error("counter unreadable")) : reader.generation()) };
  const changes = followStoreChanges(store, { keys: broken, corrections }, POLL_MS, seen);
  try {
    await writer.putCorrection("198.51.100.0/24", { city: "Testville" }, null);
    await until(() => corrections.current() !== null);
    expect(seen.failures.length).toBeGreaterThan(0);
    expect(seen.failures.every(({ follower, error }) => follower === "keys" && (error as Error).message === "snapshot unreadable")).toBe(true);
    expect(seen.reachedCount()).toBe(0);

    counterFails = true;
    const before = seen.failures.length;
    await until(() => seen.failures.slice(before).some(({ follower }) => follower === undefined));
    const counterFailure = seen.failures.slice(before).find(({ follower }) => follower === undefined)!;
    expect((counterFailure.error as Error).message).toBe("counter unreadable");
  } finally {
    changes.stop();
    await reader.close();
    await writer.close();
  }
});

test("a poll still waiting for the store starts no other; after stop() nothing more is read", async () => {
  let counterReads = 0;
  let answer: (generation: Generation) => void = () => {};
  const silent = {
    generation: () => {
      counterReads++;
      return new Promise<Generation>((resolve) => (answer = resolve));
    },
  };
  const refreshed: number[] = [];
  const seen = reports();
  const changes = followStoreChanges(silent, { keys: { refresh: async (generation) => void refreshed.push(generation.count) } }, POLL_MS, seen);
  await until(() => counterReads === 1);
  await Bun.sleep(POLL_MS * 10);
  expect(counterReads).toBe(1);
  answer({ storeId: "s", count: 7 });
  await until(() => seen.reachedCount() === 1);
  expect(refreshed).toEqual([7]);
  await until(() => counterReads === 2);
  changes.stop();
  answer({ storeId: "s", count: 8 });
  await Bun.sleep(POLL_MS * 10);
  expect(counterReads).toBe(2);
});

/**
 * A key and a correction made on `store` (its counter moves twice), the caches of a
 * server loaded from it, and a poll of its counter.
 */
async function servedStore(store: Store, name: string) {
  const issued = await store.createKey(name, "free");
  await store.putCorrection("192.0.2.0/24", { city: name }, null);
  const keys = await KeyCache.load(store);
  const corrections = await CorrectionCache.load(store);
  return { issued, keys, corrections, generation: await store.generation() };
}

test.skipIf(!postgresAvailable)("a PostgreSQL schema dropped and made again, its counter back at the value the caches loaded: both caches reload", async () => {
  const url = await states.fresh();
  const server = await PostgresStore.open(url);
  const before = await servedStore(server, "before");
  const schema = new URL(url).searchParams.get("options")!.replace("-c search_path=", "");
  const admin = new SQL(url, { max: 1 });
  await admin.unsafe(`DROP SCHEMA ${schema} CASCADE; CREATE SCHEMA ${schema}`);
  await admin.close();
  // Made again as the CLI makes it: the same changes, so the counter reads the same.
  const cli = await PostgresStore.open(url);
  const after = await cli.createKey("after", "free");
  await cli.putCorrection("192.0.2.0/24", { city: "after" }, null);
  await cli.close();
  expect((await server.generation()).count).toBe(before.generation.count);
  const seen = reports();
  const changes = followStoreChanges(server, { keys: before.keys, corrections: before.corrections }, POLL_MS, seen);
  try {
    await until(() => before.keys.authenticate(after.secret) !== null);
    expect(before.keys.authenticate(before.issued.secret)).toBeNull();
    await until(() => before.corrections.current()?.at(parseAddress("192.0.2.9")!).fields?.city === "after");
  } finally {
    changes.stop();
    await server.close();
  }
});

test("a SQLite state whose generation row is another store's, its counter at the value the caches loaded (a file restored over it): both caches reload", async () => {
  const path = freshPath();
  const server = SqliteStore.open(path);
  const before = await servedStore(server, "before");
  const raw = new Database(path);
  // What a restore of another state over the file (sqlite3's .restore) leaves: other
  // rows, another store's id, and a counter that reads what the server loaded.
  raw.transaction(() => {
    raw.run("DELETE FROM usage_days; DELETE FROM usage; DELETE FROM keys; UPDATE corrections SET fields = '{\"city\":\"after\"}'");
    raw.query("UPDATE generation SET value = ?1, store_id = 'restored'").run(before.generation.count);
  })();
  raw.close();
  expect((await server.generation()).count).toBe(before.generation.count);
  const seen = reports();
  const changes = followStoreChanges(server, { keys: before.keys, corrections: before.corrections }, POLL_MS, seen);
  try {
    await until(() => before.keys.authenticate(before.issued.secret) === null);
    await until(() => before.corrections.current()?.at(parseAddress("192.0.2.9")!).fields?.city === "after");
  } finally {
    changes.stop();
    await server.close();
  }
});

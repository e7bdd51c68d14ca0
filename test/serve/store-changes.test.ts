import { expect, test } from "bun:test";
import { KeyCache } from "../../src/access/key-cache.ts";
import { parseAddress } from "../../src/address/parse.ts";
import { CorrectionCache } from "../../src/corrections/correction-cache.ts";
import { followStoreChanges, type FollowsStore } from "../../src/serve/store-changes.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { tempStatePaths } from "../store/temp-state.ts";

const freshPath = tempStatePaths();
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
  let answer: (generation: number) => void = () => {};
  const silent = {
    generation: () => {
      counterReads++;
      return new Promise<number>((resolve) => (answer = resolve));
    },
  };
  const refreshed: number[] = [];
  const seen = reports();
  const changes = followStoreChanges(silent, { keys: { refresh: async (generation) => void refreshed.push(generation) } }, POLL_MS, seen);
  await until(() => counterReads === 1);
  await Bun.sleep(POLL_MS * 10);
  expect(counterReads).toBe(1);
  answer(7);
  await until(() => seen.reachedCount() === 1);
  expect(refreshed).toEqual([7]);
  await until(() => counterReads === 2);
  changes.stop();
  answer(8);
  await Bun.sleep(POLL_MS * 10);
  expect(counterReads).toBe(2);
});

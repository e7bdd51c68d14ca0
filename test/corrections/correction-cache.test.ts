import { expect, test } from "bun:test";
import { parseAddress } from "../../src/address/parse.ts";
import { CorrectionCache } from "../../src/corrections/correction-cache.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { tempStatePaths } from "../store/temp-state.ts";

const freshPath = tempStatePaths();

test("the cache is null without corrections, and follows the store's changes made by another connection on refresh", async () => {
  const path = freshPath();
  const writer = SqliteStore.open(path);
  const reader = SqliteStore.open(path);
  const cache = await CorrectionCache.load(reader);
  expect(cache.current()).toBeNull();
  await writer.putCorrection("192.0.2.0/24", { asn: 64500 }, null);
  expect(cache.current()).toBeNull(); // not before a refresh
  await cache.refresh();
  expect(cache.current()?.at(parseAddress("192.0.2.9")!).fields).toEqual({ asn: 64500 });
  const table = cache.current();
  // A change to keys moves the counter too; the corrections are read again, and equal.
  await writer.createKey("k", "free");
  await cache.refresh();
  expect(cache.current()).not.toBe(table);
  expect(cache.current()?.size).toBe(1);
  await writer.removeCorrection("192.0.2.0/24");
  await cache.refresh();
  expect(cache.current()).toBeNull();
  // A poll that fails keeps what it knew.
  await writer.putCorrection("192.0.2.0/24", { asn: 1 }, null);
  await cache.refresh();
  await reader.close();
  await expect(cache.refresh()).rejects.toThrow();
  expect(cache.current()?.size).toBe(1);
  await writer.close();
});

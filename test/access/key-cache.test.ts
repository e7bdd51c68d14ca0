/**
 * The key cache's invariant under a race: a key read from the store before a reload must
 * not be kept after it (the key may have been revoked in between, and the reload's
 * snapshot is the newer truth).
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KeyCache } from "../../src/access/key-cache.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import type { ActiveKey, Store } from "../../src/store/store.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-key-cache-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The real store, with findActiveKey's answer held back until `release()` (the read itself happens at once). */
function withHeldLookups(store: SqliteStore) {
  const held: (() => void)[] = [];
  const proxy = new Proxy(store, {
    get(target, property) {
      if (property !== "findActiveKey") {
        const value = Reflect.get(target, property, target) as unknown;
        return typeof value === "function" ? value.bind(target) : value;
      }
      return async (hash: string): Promise<ActiveKey | null> => {
        const answer = await target.findActiveKey(hash);
        await new Promise<void>((resolve) => held.push(resolve));
        return answer;
      };
    },
  }) as Store;
  return { store: proxy, release: () => held.splice(0).forEach((go) => go()) };
}

test("a key read before a reload that revoked it is not kept afterwards", async () => {
  const real = SqliteStore.open(join(dir, "race.db"));
  const { store, release } = withHeldLookups(real);
  const cache = await KeyCache.load(store);
  // Created after the cache loaded: only a lookup in the store finds it.
  const { key, secret } = await real.createKey("racer", "free");
  const lookup = cache.lookUp(secret);
  // While the lookup's answer (active) is on its way, the key is revoked and the cache reloads.
  await Bun.sleep(10);
  await real.revokeKey(key.id);
  await cache.refresh();
  release();
  expect((await lookup)?.key.id).toBe(key.id);
  // The stale answer did its request's turn, and is not remembered.
  expect(cache.authenticate(secret)).toBeNull();
  await real.close();
});

test("a key read with no reload in between is kept: the next request needs no store", async () => {
  const real = SqliteStore.open(join(dir, "kept.db"));
  const { store, release } = withHeldLookups(real);
  const cache = await KeyCache.load(store);
  const { key, secret } = await real.createKey("kept", "free");
  const lookup = cache.lookUp(secret);
  await Bun.sleep(10);
  release();
  await lookup;
  expect(cache.authenticate(secret)?.key.id).toBe(key.id);
  await real.close();
});

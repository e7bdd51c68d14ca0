import { isUnwritable, unwritableError } from "./sqlite-faults.ts";
import { StoreUnavailableError, type Store } from "./store.ts";

/**
 * What SQLite says when another connection holds the write lock and busy_timeout is 0:
 * SQLITE_BUSY, or a StoreUnavailableError made of it by a store method that names the
 * lock in its own words (the corrections' writes).
 */
function isLocked(error: unknown): boolean {
  if (error instanceof StoreUnavailableError) return isLocked(error.cause);
  return (error as { code?: unknown } | undefined)?.code === "SQLITE_BUSY";
}

/**
 * The store with every method that finds SQLite's write lock taken tried again later,
 * asynchronously, for at most `waitMs`; then it rejects with StoreUnavailableError
 * (503 `store_unavailable`). For a store opened with `lockWaitMs` (busy_timeout 0),
 * whose writes fail at once rather than wait on the thread: the admin listener's, on
 * the thread that also serves lookups. A write that met the lock changed nothing (its
 * transaction never began), so trying it again is safe. A change and its audit entry are
 * one call, one transaction (see Audit in store.ts), so they are tried again, and give
 * up, together: a change that ends in StoreUnavailableError was not made. Charges have
 * their own waiting (GroupCommit), which ends in StoreUnavailableError, never SQLITE_BUSY.
 *
 * A write that fails because the file cannot be written (a full disk, a file made
 * read-only: see isUnwritable) rejects at once with StoreUnavailableError as well.
 *
 * The store's members that hold methods of their own (`webhooks`) are wrapped the same
 * way: every write the admin API makes goes through here.
 */
export function retryWhileLocked(store: Store, waitMs: number, statePath: string): Store {
  return retrying(store, waitMs, statePath, { webhooks: retrying(store.webhooks, waitMs, statePath) });
}

function retrying<T extends object>(target: T, waitMs: number, statePath: string, members: Partial<T> = {}): T {
  return new Proxy(target, {
    get(target, property) {
      if (Object.hasOwn(members, property)) return members[property as keyof T];
      const value = Reflect.get(target, property, target) as unknown;
      if (typeof value !== "function") return value;
      return async (...args: unknown[]) => {
        const giveUpAt = performance.now() + waitMs;
        for (let pause = 5; ; pause = Math.min(pause * 2, 100)) {
          try {
            return await (value as (...args: unknown[]) => unknown).apply(target, args);
          } catch (error) {
            // A full disk, a file made read-only: not tried again, 503 store_unavailable too.
            if (isUnwritable(error)) throw unwritableError(statePath, error);
            if (!isLocked(error)) throw error;
            if (performance.now() >= giveUpAt) {
              throw new StoreUnavailableError(`the state file is locked by another process (waited ${waitMs} ms)`, { cause: error });
            }
            await Bun.sleep(Math.min(pause, Math.max(1, giveUpAt - performance.now())));
          }
        }
      };
    },
  });
}

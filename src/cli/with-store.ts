import { existsSync, rmSync } from "node:fs";
import { readSetting } from "../config/settings.ts";
import { SqliteStore } from "../store/sqlite-store.ts";
import type { Store } from "../store/store.ts";
import type { CliContext } from "./command.ts";

/**
 * Opens the state file named by `--state` / IPLOOKUP_STATE, runs `work`, and closes it.
 * A command that fails on a state file it had to create removes it again, so a refused
 * command leaves nothing behind.
 */
export async function withStore<T>(
  flags: Readonly<Record<string, unknown>>,
  context: CliContext,
  work: (store: Store) => Promise<T>,
): Promise<T> {
  const path = readSetting("state", flags, context.env);
  const existed = existsSync(path);
  const store = SqliteStore.open(path);
  try {
    const result = await work(store);
    await store.close();
    return result;
  } catch (error) {
    await store.close();
    if (!existed) for (const suffix of ["", "-wal", "-shm"]) rmSync(path + suffix, { force: true });
    throw error;
  }
}

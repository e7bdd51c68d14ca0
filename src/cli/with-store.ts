import { readSetting } from "../config/settings.ts";
import { SqliteStore } from "../store/sqlite-store.ts";
import type { Store } from "../store/store.ts";
import type { CliContext } from "./command.ts";

/** Opens the state file named by `--state` / IPLOOKUP_STATE, runs `work`, and closes it. */
export async function withStore<T>(
  flags: Readonly<Record<string, unknown>>,
  context: CliContext,
  work: (store: Store) => Promise<T>,
): Promise<T> {
  const store = SqliteStore.open(readSetting("state", flags, context.env));
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

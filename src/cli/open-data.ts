import { existsSync } from "node:fs";
import { dirname } from "node:path";
import { ConfigError } from "../config/config-error.ts";
import { defaultDataPath } from "../config/paths.ts";
import { LiveIndex, type IndexLoader } from "../index/live-index.ts";
import { RangeIndex } from "../index/range-index.ts";
import { CommandFailed } from "./command.ts";

/** A data file that cannot be loaded is a bad --data value: the command exits 2 saying why. */
export function openIndex(path: string): RangeIndex {
  return asConfigError(path, () => RangeIndex.open(path));
}

export function openLiveIndex(path: string, onReload: ConstructorParameters<typeof LiveIndex>[1], loader?: IndexLoader): LiveIndex {
  return asConfigError(path, () => new LiveIndex(path, onReload, loader));
}

function asConfigError<T>(path: string, load: () => T): T {
  checkDataFile(path);
  try {
    return load();
  } catch (error) {
    throw new ConfigError(`--data: ${(error as Error).message}`);
  }
}

/**
 * A missing file is named before SQLite's "unable to open database file". The default
 * data of a checkout is missing until it is built, which is no bad value but a step not
 * taken yet (exit 1): the message says how to take it. The compiled binary's default
 * is embedded and always there. `config check` makes the same check.
 */
export function checkDataFile(path: string): void {
  if (existsSync(path)) return;
  if (path === defaultDataPath()) {
    const checkout = dirname(dirname(path));
    throw new CommandFailed(`the default data file ${path} is not built yet; build it with 'bun run data:default' in ${checkout} (or name a data file with --data)`);
  }
  throw new ConfigError(`--data: there is no data file at ${path}`);
}

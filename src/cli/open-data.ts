import { existsSync } from "node:fs";
import { dirname } from "node:path";
import { ConfigError } from "../config/config-error.ts";
import { defaultDataPath, isEmbedded } from "../config/paths.ts";
import { LiveIndex, type IndexLoader } from "../index/live-index.ts";
import { RangeIndex } from "../index/range-index.ts";
import { CommandFailed } from "./command.ts";

/**
 * A data file that cannot be loaded is a bad --data value: the command exits 2 saying
 * why, with the file's path. `name`: what the path was given as (`--data`, or
 * `IPLOOKUP_DATA`: see givenAs).
 */
export function openIndex(path: string, name = "--data"): RangeIndex {
  return asConfigError(path, name, () => RangeIndex.open(path));
}

export function openLiveIndex(path: string, onReload: ConstructorParameters<typeof LiveIndex>[1], loader?: IndexLoader, name = "--data"): LiveIndex {
  return asConfigError(path, name, () => new LiveIndex(path, onReload, loader));
}

function asConfigError<T>(path: string, name: string, load: () => T): T {
  checkDataFile(path, name);
  try {
    return load();
  } catch (error) {
    const message = (error as Error).message;
    // "not an iplookup data file: …", "the data file is damaged: …" name no file; the
    // embedded data's path is internal, and named as such.
    const shown = isEmbedded(path) ? "the data embedded in the binary" : path;
    throw new ConfigError(message.includes(path) ? `${name}: ${message}` : `${name}: ${shown}: ${message}`);
  }
}

/**
 * A missing file is named before SQLite's "unable to open database file". The default
 * data of a checkout is missing until it is built, which is no bad value but a step not
 * taken yet (exit 1): the message says how to take it. The compiled binary's default
 * is embedded and always there. `config check` makes the same check.
 */
export function checkDataFile(path: string, name = "--data"): void {
  if (existsSync(path)) return;
  if (path === defaultDataPath()) {
    const checkout = dirname(dirname(path));
    throw new CommandFailed(`the default data file ${path} is not built yet; build it with 'bun run data:default' in ${checkout} (or name a data file with --data)`);
  }
  throw new ConfigError(`${name}: there is no data file at ${path}`);
}

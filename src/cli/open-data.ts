import { ConfigError } from "../config/config-error.ts";
import { LiveIndex } from "../index/live-index.ts";
import { RangeIndex } from "../index/range-index.ts";

/** A data file that cannot be loaded is a bad --data value: the command exits 2 saying why. */
export function openIndex(path: string): RangeIndex {
  return asConfigError(() => RangeIndex.open(path));
}

export function openLiveIndex(path: string, onReload: ConstructorParameters<typeof LiveIndex>[1]): LiveIndex {
  return asConfigError(() => new LiveIndex(path, onReload));
}

function asConfigError<T>(load: () => T): T {
  try {
    return load();
  } catch (error) {
    throw new ConfigError(`--data: ${(error as Error).message}`);
  }
}

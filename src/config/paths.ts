import { homedir } from "node:os";
import { join, resolve } from "node:path";

/**
 * The state file's default location: `$XDG_STATE_HOME/iplookup/state.db`, else
 * `~/.local/state/iplookup/state.db` (the XDG base directory rule for state that should
 * persist across restarts but is not configuration).
 */
export function defaultStatePath(env: Readonly<Record<string, string | undefined>>): string {
  const stateHome = env.XDG_STATE_HOME || join(env.HOME || homedir(), ".local", "state");
  return join(stateHome, "iplookup", "state.db");
}

/** The default data file: built into data/ by `bun run data:default`. */
export function defaultDataPath(): string {
  return join(import.meta.dir, "..", "..", "data", "iplookup-data.db");
}

/** Whether a path names a file embedded in the compiled binary (Bun's virtual root). */
export function isEmbedded(path: string): boolean {
  return path.startsWith("/$bunfs/") || path.includes("~BUN");
}

/**
 * How the logs name a server's data file: its path, or for the data embedded in the
 * binary (whose path is internal, `/$bunfs/root/…`) `embedded (SOURCES)`, with the
 * data's source versions. The start-up line and the reload lines say the same.
 */
export function dataSourceName(dataPath: string, sourceVersions: string): string {
  return isEmbedded(dataPath) ? `embedded (${sourceVersions})` : dataPath;
}

/**
 * Whether a --state or --data value names a file on this machine: not `:memory:` (a
 * store that lives and dies with the process) and not a URL (`postgres://…`).
 */
export function isFilePath(text: string): boolean {
  return text !== ":memory:" && !/^[a-z][a-z0-9+.-]*:\/\//i.test(text);
}

/**
 * A file's path made absolute against the working directory, so every message and the
 * start-up line name the same file wherever they are read; `:memory:`, URLs and files
 * embedded in the binary stay as they are.
 */
export function absolutePath(text: string): string {
  return isFilePath(text) && !isEmbedded(text) ? resolve(text) : text;
}

import { homedir } from "node:os";
import { join } from "node:path";

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

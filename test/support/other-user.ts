import { chownSync } from "node:fs";
import { join } from "node:path";
import { cli } from "./server-process.ts";

const MAIN = join(import.meta.dir, "..", "..", "src", "main.ts");

/** The user the CLI runs as, as root: file permissions refuse nothing to root. */
export const OTHER_USER = 61235;
export const asRoot = process.getuid?.() === 0;

/**
 * The command that runs the CLI as a user the permissions apply to: as root, another user
 * (setpriv, uid and gid OTHER_USER, no groups); as any other user, that user.
 */
export const cliAsOtherUser: string[] = asRoot
  ? ["setpriv", `--reuid=${OTHER_USER}`, `--regid=${OTHER_USER}`, "--clear-groups", process.execPath, MAIN]
  : [process.execPath, MAIN];

/** Whether that command runs here: false only as root without setpriv, or where that user cannot run bun on this checkout (said once). */
export const otherUserRuns: boolean = !asRoot || (Bun.which("setpriv") !== null && cli(["--version"], {}, cliAsOtherUser).code === 0);
if (!otherUserRuns) console.warn(`skipped: running as root without setpriv, or uid ${OTHER_USER} cannot run bun on this checkout`);

/** Gives a folder made by root to the user the CLI runs as (nothing to do as any other user). */
export function giveToOtherUser(path: string): void {
  if (asRoot) chownSync(path, OTHER_USER, OTHER_USER);
}

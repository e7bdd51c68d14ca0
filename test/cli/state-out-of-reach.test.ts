import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { asRoot, cliAsOtherUser as command, giveToOtherUser, otherUserRuns as runnable } from "../support/other-user.ts";
import { cli } from "../support/server-process.ts";

/**
 * A state file in a folder this user cannot search (`--state /root/x.db` as another
 * user; the package's state folder is 0700) is out of reach, not missing: every command
 * on it says so in one line, naming the file and the system's reason, and exits 1. It
 * used to take the file for one it had made and fail removing it, which hid the reason
 * behind "EACCES: permission denied, rm …".
 *
 * File permissions refuse nothing to root, so as root the CLI runs as another user
 * (setpriv, uid and gid 61235) beside a folder of root's, mode 0700; as any other user
 * it runs as that user beside a folder of its own, mode 0. Skipped only as root without
 * setpriv, or where that user cannot run bun on this checkout.
 */

const root = mkdtempSync(join(tmpdir(), "iplookup-state-reach-"));
chmodSync(root, 0o755);
/** Where the CLI's user may write. */
const own = join(root, "own");
mkdirSync(own, { mode: 0o700 });
giveToOtherUser(own);
/** The CLI's home (bun keeps a cache there). */
const home = join(root, "home");
mkdirSync(home, { mode: 0o700 });
giveToOtherUser(home);
/** The folder the CLI's user cannot search. */
const locked = join(root, "locked");
mkdirSync(locked, { mode: 0o700 });
if (!asRoot) chmodSync(locked, 0);
afterAll(() => {
  chmodSync(locked, 0o700);
  rmSync(root, { recursive: true, force: true });
});

const run = (args: string[]) => cli(args, { HOME: home, IPLOOKUP_STATE: "" }, command);

describe.skipIf(!runnable)("a state file out of reach: one line naming it and the reason, exit 1", () => {
  const state = join(locked, "state.db");
  test.each([
    ["keys list", ["keys", "list", "--state", state], `iplookup: the state file ${state} cannot be opened: its folder ${locked}: permission denied (EACCES)`],
    ["plans list", ["plans", "list", "--state", state], `iplookup: the state file ${state} cannot be opened: its folder ${locked}: permission denied (EACCES)`],
    ["keys create", ["keys", "create", "--name", "k", "--state", state], `iplookup: cannot create the state file ${state}: permission denied (EACCES)`],
    ["backup", ["backup", join(own, "backup.db"), "--state", state], `iplookup: the state file ${state} cannot be opened: its folder ${locked}: permission denied (EACCES)`],
    ["state copy --from", ["state", "copy", "--from", state, "--to", join(own, "copy.db")], `iplookup: the state file ${state} cannot be opened: its folder ${locked}: permission denied (EACCES)`],
  ])("%s", (_name, args, line) => {
    const result = run(args);
    expect(result.stderr).toBe(`${line}\n`);
    expect(result.code).toBe(1);
    expect(readdirSync(own)).toEqual([]);
  });

  test("state copy --to: the copy cannot be made, and the source is left as it was", () => {
    const source = join(own, "source.db");
    expect(run(["keys", "create", "--name", "k", "--state", source]).code).toBe(0);
    const result = run(["state", "copy", "--from", source, "--to", state]);
    expect(result.stderr).toBe(`iplookup: cannot create the state file ${state}: permission denied (EACCES)\n`);
    expect(result.code).toBe(1);
    expect(JSON.parse(run(["keys", "list", "--json", "--state", source]).stdout)).toHaveLength(1);
    rmSync(source);
  });
});

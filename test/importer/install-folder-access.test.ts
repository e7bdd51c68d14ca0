import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { asRoot, cliAsOtherUser as command, giveToOtherUser, otherUserRuns as runnable } from "../support/other-user.ts";
import { cli } from "../support/server-process.ts";

const MAIN = join(import.meta.dir, "..", "..", "src", "main.ts");

/**
 * A data file whose folder this user cannot write (the server's, 0755, as another user;
 * a read-only mount): `data import` and `data update` say so in one line naming the
 * data file, its folder and what to do, and exit 1, before anything is downloaded or
 * made; nothing is left beside the file. They used to print the system's words about the
 * lock's file (`EACCES: permission denied, open '…/.data.db.update-lock'`), which the
 * operator never named.
 *
 * File permissions refuse nothing to root, so as root the CLI runs as another user
 * (setpriv, uid and gid 61235) beside folders of root's; as any other user it runs as
 * that user beside folders made unwritable for it. The read-only mount needs root and
 * unshare (a mount namespace of the command's own, gone with it). Each is skipped,
 * saying so, where it cannot run.
 */

const root = mkdtempSync(join(tmpdir(), "iplookup-install-access-"));
chmodSync(root, 0o755);
/** The CLI's home (bun keeps a cache there), and a folder the CLI's user may write. */
const home = join(root, "home");
const own = join(root, "own");
for (const folder of [home, own]) {
  mkdirSync(folder, { mode: 0o755 });
  giveToOtherUser(folder);
}
const source = join(root, "six.csv");
writeFileSync(source, "1.0.0.0,1.0.0.255,13335,Cloudflare\n");
chmodSync(source, 0o644);
/** Another user's folder holding a data file: searchable, not writable by the CLI's user. */
const locked = join(root, "locked");
mkdirSync(locked, { mode: 0o755 });
const data = join(locked, "data.db");
expect(cli(["data", "import", "--data", data, "--format", "asn-csv", source]).code).toBe(0);
chmodSync(data, 0o644);
if (!asRoot) chmodSync(locked, 0o555);
/** Another user's folder the CLI's user cannot even search. */
const hidden = join(root, "hidden");
mkdirSync(hidden, { mode: 0o700 });
if (!asRoot) chmodSync(hidden, 0);
afterAll(() => {
  chmodSync(locked, 0o755);
  chmodSync(hidden, 0o700);
  rmSync(root, { recursive: true, force: true });
});

const run = (args: string[]) => cli(args, { HOME: home, IPLOOKUP_STATE: "" }, command);
const hint = "run it as a user who may write there, or keep the data file in a folder this user may write (--data)";

describe.skipIf(!runnable)("a data file's folder this user cannot write: one line naming it, the folder and what to do, exit 1", () => {
  const before = readFileSync(data);
  test.each([
    [
      "data import over a data file",
      ["data", "import", "--data", data, "--format", "asn-csv", source],
      `iplookup: cannot write the data file ${data}: its folder ${locked} is not writable: permission denied (EACCES). The new file is written beside it (with its lock, .data.db.update-lock) and renamed into place: ${hint}`,
    ],
    [
      "data import into a folder to make",
      ["data", "import", "--data", join(locked, "sub", "new.db"), "--format", "asn-csv", source],
      `iplookup: cannot write the data file ${join(locked, "sub", "new.db")}: its folder ${join(locked, "sub")} does not exist, and ${locked}, where it would be made, is not writable: permission denied (EACCES). The new file is written beside it (with its lock, .new.db.update-lock) and renamed into place: ${hint}`,
    ],
    [
      "data update",
      ["data", "update", "--data", data],
      `iplookup: data update failed: cannot write the data file ${data}: its folder ${locked} is not writable: permission denied (EACCES). The new file is written beside it (with its lock, .data.db.update-lock) and renamed into place: ${hint}; ${data} is left as it was`,
    ],
    [
      "data import into a folder it cannot search",
      ["data", "import", "--data", join(hidden, "data.db"), "--format", "asn-csv", source],
      `iplookup: cannot write the data file ${join(hidden, "data.db")}: its folder ${hidden} is not writable: permission denied (EACCES). The new file is written beside it (with its lock, .data.db.update-lock) and renamed into place: ${hint}`,
    ],
  ])("%s", (_name, args, line) => {
    const result = run(args);
    expect(result.stderr).toBe(`${line}\n`);
    expect(result.code).toBe(1);
    expect(readdirSync(locked)).toEqual(["data.db"]);
    expect(readFileSync(data).equals(before)).toBe(true);
    expect(readdirSync(own)).toEqual([]);
  });

  test.skipIf(!asRoot)("another user's lock file left beside a data file in the user's own folder: named with the data file", () => {
    const lock = join(own, ".data.db.update-lock");
    writeFileSync(lock, "", { mode: 0o600 });
    try {
      const result = run(["data", "import", "--data", join(own, "data.db"), "--format", "asn-csv", source]);
      expect(result.stderr).toBe(
        `iplookup: cannot take the update lock of the data file ${join(own, "data.db")} (${lock}): permission denied (EACCES); the file is another user's, from an import or update of this data file that runs, or was killed and left it: when none runs, remove it\n`,
      );
      expect(result.code).toBe(1);
      expect(readdirSync(own)).toEqual([".data.db.update-lock"]);
    } finally {
      rmSync(lock);
    }
  });

  test.skipIf(!asRoot)("another user's state file, which this user may not read, beside an empty -wal in the user's own folder: the -wal is refused as its companion", () => {
    const state = join(own, "state.db");
    expect(cli(["keys", "create", "--name", "k", "--state", state]).code).toBe(0);
    chmodSync(state, 0o600);
    writeFileSync(`${state}-wal`, "");
    try {
      const result = run(["data", "import", "--data", `${state}-wal`, "--format", "asn-csv", source]);
      expect(result.stderr).toBe(`iplookup: ${state}-wal is the write-ahead log of the SQLite file ${state}, not a data file: it is left as it is; --data names the data file an import writes\n`);
      expect(result.code).toBe(2);
      expect(readFileSync(`${state}-wal`).byteLength).toBe(0);
    } finally {
      rmSync(state, { force: true });
      rmSync(`${state}-wal`, { force: true });
      rmSync(`${state}-shm`, { force: true });
    }
  });
});

/** Whether this process may give a command a mount namespace of its own with a read-only bind mount. */
const canMount = asRoot && Bun.which("unshare") !== null && Bun.spawnSync(["unshare", "--mount", "--propagation", "private", "mount", "--bind", root, root]).exitCode === 0;
if (!canMount) console.warn("skipped: a read-only mount (needs root, unshare and mount)");

test.skipIf(!canMount)("a data file on a read-only file system: named, exit 1", () => {
  const folder = join(root, "mounted");
  mkdirSync(folder);
  const path = join(folder, "data.db");
  expect(cli(["data", "import", "--data", path, "--format", "asn-csv", source]).code).toBe(0);
  const before = readFileSync(path);
  const script = `mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"`;
  const result = cli(["data", "import", "--data", path, "--format", "asn-csv", source], {}, ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", folder, process.execPath, MAIN]);
  expect(result.stderr).toBe(
    `iplookup: cannot write the data file ${path}: its folder ${folder} is on a read-only file system (EROFS). The new file is written beside it (with its lock, .data.db.update-lock) and renamed into place: keep the data file on a writable file system (--data)\n`,
  );
  expect(result.code).toBe(1);
  expect(readdirSync(folder)).toEqual(["data.db"]);
  expect(readFileSync(path).equals(before)).toBe(true);
});

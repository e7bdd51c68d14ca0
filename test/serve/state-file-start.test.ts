import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, chownSync, copyFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cli } from "../support/server-process.ts";

/**
 * File permissions refuse nothing to root, so as root the CLI runs as another user
 * (setpriv, uid and gid 61234) over files owned by that user; as any other user it runs
 * as that user. Skipped only as root without setpriv, or where that user cannot run bun
 * on this checkout.
 */
const MAIN = join(import.meta.dir, "..", "..", "src", "main.ts");
const OTHER = 61234;
const asRoot = process.getuid?.() === 0;
const command = asRoot ? ["setpriv", `--reuid=${OTHER}`, `--regid=${OTHER}`, "--clear-groups", process.execPath, MAIN] : [process.execPath, MAIN];
const runnable = !asRoot || (Bun.which("setpriv") !== null && cli(["--version"], {}, command).code === 0);
if (!runnable) console.warn("skipped: running as root without setpriv, or uid 61234 cannot run bun on this checkout");

const root = mkdtempSync(join(tmpdir(), "iplookup-state-start-"));
chmodSync(root, 0o755);
afterAll(() => rmSync(root, { recursive: true, force: true }));
let count = 0;

/** A folder of the user the CLI runs as, mode 0700. */
function ownFolder(): string {
  const folder = join(root, `f${++count}`);
  mkdirSync(folder, { mode: 0o700 });
  if (asRoot) chownSync(folder, OTHER, OTHER);
  return folder;
}

/** Runs `serve` to its end: a server that starts (the fault missed) is stopped at once and fails the test. */
async function serve(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const child = Bun.spawn([...command, "serve", "--host", "127.0.0.1", "--port", "0", "--admin-port", "off", "--workers", "1", ...args], {
    env: { ...process.env, HOME: root },
    stdout: "ignore",
    stderr: "pipe",
  });
  let stderr = "";
  const decoder = new TextDecoder();
  for await (const chunk of child.stderr as ReadableStream<Uint8Array>) {
    stderr += decoder.decode(chunk, { stream: true });
    if (stderr.includes("iplookup serving")) child.kill("SIGTERM");
  }
  return { code: await child.exited, stderr };
}

describe.skipIf(!runnable)("serve refuses a state file it cannot use, naming it and the reason, exit 1", () => {
  test("a read-only state file (SQLite would open it read-only without a word)", async () => {
    const state = join(ownFolder(), "state.db");
    expect(cli(["keys", "create", "--name", "k", "--state", state], { HOME: root }, command).code).toBe(0);
    chmodSync(state, 0o400);
    const { code, stderr } = await serve(["--state", state]);
    expect(stderr).not.toContain("iplookup serving");
    expect(stderr.trim()).toBe(`iplookup: the state file ${state} cannot be written: the file is read-only for this user: permission denied (EACCES)`);
    expect(code).toBe(1);
    // Commands that only read it still do.
    expect(cli(["keys", "list", "--state", state], { HOME: root }, command).code).toBe(0);
  });

  test("a read-only folder, where SQLite creates the -wal and -shm files", async () => {
    const folder = ownFolder();
    const state = join(folder, "state.db");
    expect(cli(["keys", "create", "--name", "k", "--state", state], { HOME: root }, command).code).toBe(0);
    chmodSync(folder, 0o500);
    const { code, stderr } = await serve(["--state", state]);
    chmodSync(folder, 0o700);
    expect(stderr.trim()).toBe(`iplookup: the state file ${state} cannot be written: its folder ${folder} is not writable, and SQLite creates the -wal and -shm files there: permission denied (EACCES)`);
    expect(code).toBe(1);
  });

  test("a folder that cannot be created is the state's fault, not the port's", async () => {
    const folder = ownFolder();
    chmodSync(folder, 0o500);
    const state = join(folder, "sub", "state.db");
    const { code, stderr } = await serve(["--state", state]);
    expect(stderr).not.toContain("cannot listen");
    expect(stderr.trim()).toBe(`iplookup: cannot create the state file ${state}: ${join(folder, "sub")}: permission denied (EACCES)`);
    expect(code).toBe(1);
  });

  test("a state file of another user, mode 0600", async () => {
    const folder = ownFolder();
    const state = join(folder, "state.db");
    expect(cli(["keys", "create", "--name", "k", "--state", state], { HOME: root }, command).code).toBe(0);
    // Unreadable to the user the CLI runs as: owned by root (as root), or mode 000 (otherwise).
    if (asRoot) chownSync(state, 0, 0);
    else chmodSync(state, 0o000);
    const { code, stderr } = await serve(["--state", state]);
    expect(stderr.trim()).toBe(`iplookup: the state file ${state} cannot be opened: permission denied (EACCES)`);
    expect(code).toBe(1);
  });

  test("a data file that cannot be read says why", () => {
    const folder = ownFolder();
    const data = join(folder, "data.db");
    copyFileSync(join(import.meta.dir, "..", "..", "data", "iplookup-data.db"), data);
    if (asRoot) chownSync(data, OTHER, OTHER);
    chmodSync(data, 0o000);
    const { code, stderr } = cli(["lookup", "8.8.8.8", "--data", data], { HOME: root }, command);
    expect(stderr).toContain(`cannot open the data file ${data}: permission denied (EACCES)`);
    expect(code).not.toBe(0);
  });
});

import { closeSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Turns for the test files that take a gigabyte or so beside the runner (the city data
 * import, a browser). `bun run test` runs two files at once; which files meet depends on
 * how fast the machine runs them, and when these two met the suite's processes went from
 * about 1.6 to 2.6 GB. Each takes its turn through a lock file, created exclusively and
 * holding the holder's pid, so one whose holder died (killed mid-test) is taken over.
 *
 * Resolves with the function that ends the turn. Waits at most `maxWaitMs`, then goes
 * ahead anyway: the lock keeps memory down, a test must not hang on it.
 */
export async function heavyTurn({ maxWaitMs = 90_000, lock = join(tmpdir(), "iplookup-test-heavy-turn.lock") } = {}): Promise<() => void> {
  const giveUpAt = Date.now() + maxWaitMs;
  for (;;) {
    try {
      const fd = openSync(lock, "wx");
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => {
        if (holderOf(lock) === process.pid) rmSync(lock, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const holder = holderOf(lock);
    if (holder !== null && !alive(holder)) rmSync(lock, { force: true });
    if (Date.now() > giveUpAt) return () => {};
    await Bun.sleep(100);
  }
}

function holderOf(lock: string): number | null {
  try {
    const pid = Number(readFileSync(lock, "utf8"));
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

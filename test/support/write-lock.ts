import { expect } from "bun:test";

/**
 * Another process that takes the SQLite state file's write lock (BEGIN IMMEDIATE and a
 * write) and holds it for `holdMs`, then commits and exits: resolves once the lock is
 * held. `exited` is the process's end; `kill` ends it at once (the lock then goes with it).
 */
export async function holdWriteLock(state: string, holdMs: number): Promise<{ exited: Promise<number>; kill(): Promise<void> }> {
  const holder = Bun.spawn(
    [process.execPath, "-e", `
      import { Database } from "bun:sqlite";
      const db = new Database(${JSON.stringify(state)});
      db.run("BEGIN IMMEDIATE");
      db.run("UPDATE generation SET value = value");
      console.log("locked");
      await Bun.sleep(${holdMs});
      db.run("COMMIT");`],
    { stdout: "pipe", stderr: "inherit" },
  );
  const reader = (holder.stdout as ReadableStream<Uint8Array>).getReader();
  expect(new TextDecoder().decode((await reader.read()).value)).toContain("locked");
  reader.releaseLock();
  return {
    exited: holder.exited,
    async kill() {
      holder.kill("SIGKILL");
      await holder.exited;
    },
  };
}

import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { rssMiB } from "./processes.ts";

export interface StartupFigures {
  command: string;
  firstLookupMs: number;
  rssAfterStartMiB: number;
}

/** Process start to the first answered lookup, best of `runs`, and RSS right then. */
export async function measureStartup(label: string, command: string[], runs = 5): Promise<StartupFigures> {
  const dir = mkdtempSync(join(tmpdir(), "iplookup-startup-"));
  const state = join(dir, "state.db");
  const store = SqliteStore.open(state);
  const { secret } = await store.createKey("startup", "unlimited");
  await store.close();
  let best = Number.POSITIVE_INFINITY;
  let rss = 0;
  try {
    for (let run = 0; run < runs; run++) {
      const port = 20_000 + Math.floor(Math.random() * 20_000);
      const began = performance.now();
      const child = Bun.spawn([...command, "serve", "--host", "127.0.0.1", "--port", String(port), "--workers", "1", "--admin-port", "off", "--state", state, "--log-level", "silent"], {
        stdout: "ignore",
        stderr: "ignore",
      });
      const deadline = began + 10_000;
      let answered = false;
      while (!answered && performance.now() < deadline) {
        try {
          const response = await fetch(`http://127.0.0.1:${port}/v1/lookup`, {
            method: "POST",
            headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
            body: '{"ip":"1.1.1.1"}',
          });
          answered = response.status === 200;
        } catch {
          await Bun.sleep(2);
        }
      }
      const elapsed = performance.now() - began;
      if (answered && elapsed < best) {
        best = elapsed;
        rss = rssMiB(child.pid);
      }
      child.kill("SIGTERM");
      await child.exited;
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return { command: label, firstLookupMs: best, rssAfterStartMiB: rss };
}

export function binaryPath(): string | null {
  const path = join(import.meta.dir, "..", "..", "dist", "iplookup");
  return existsSync(path) ? path : null;
}

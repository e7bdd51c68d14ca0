import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { rssMiB } from "./processes.ts";

export interface WorkersMemoryFigures {
  /** Resident memory of `serve --workers 1` and `--workers 2` on the same data, after the same requests. */
  readonly oneWorkerMiB: number;
  readonly twoWorkersMiB: number;
  readonly ratio: number;
}

const MAIN = join(import.meta.dir, "..", "..", "src", "main.ts");

/**
 * The memory one more worker thread costs on a large data set: `serve --data FILE` with
 * one worker, then with two, each answering the same 2,000 lookups spread over many
 * connections (so every thread has served), its RSS read from /proc afterwards.
 */
export async function measureWorkersMemory(dataPath: string): Promise<WorkersMemoryFigures> {
  const dir = mkdtempSync(join(tmpdir(), "iplookup-bench-workers-"));
  try {
    const [one, two] = [await serveAndMeasure(dataPath, 1, dir), await serveAndMeasure(dataPath, 2, dir)] as [number, number];
    return { oneWorkerMiB: one, twoWorkersMiB: two, ratio: two / one };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function serveAndMeasure(dataPath: string, workers: number, dir: string): Promise<number> {
  const state = join(dir, `state-${workers}.db`);
  const created = Bun.spawnSync([process.execPath, MAIN, "keys", "create", "--name", "bench", "--plan", "unlimited", "--json", "--state", state], { stdout: "pipe" });
  const { key } = JSON.parse(created.stdout.toString()) as { key: string };
  const child = Bun.spawn(
    [process.execPath, MAIN, "serve", "--host", "127.0.0.1", "--port", "0", "--workers", String(workers), "--admin-port", "off", "--data", dataPath, "--state", state, "--log-level", "warn"],
    { stdout: "ignore", stderr: "pipe" },
  );
  try {
    const url = await listenUrl(child.stderr as ReadableStream<Uint8Array>);
    for (let round = 0; round < 50; round++) {
      await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          fetch(`${url}v1/lookup`, {
            method: "POST",
            headers: { authorization: `Bearer ${key}`, "content-type": "application/json", connection: "close" },
            body: JSON.stringify({ ip: `${1 + ((round * 40 + i) % 200)}.${i}.${round}.1` }),
          }).then((response) => response.arrayBuffer()),
        ),
      );
    }
    return rssMiB(child.pid);
  } finally {
    child.kill("SIGTERM");
    await child.exited;
  }
}

async function listenUrl(stderr: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stderr.getReader();
  let text = "";
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const chunk = await reader.read();
    if (chunk.done) break;
    text += new TextDecoder().decode(chunk.value);
    const match = /"listen":"([^"]+)"/.exec(text);
    if (match) {
      reader.releaseLock();
      return match[1] as string;
    }
  }
  throw new Error(`the server did not start: ${text}`);
}

/**
 * CONTRACT §12: signals at any moment. SIGTERM or SIGINT during start-up exits 0; a
 * SIGHUP before the data is loaded is ignored (nothing to reload yet), and the server
 * goes on starting.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const MAIN = join(import.meta.dir, "..", "..", "src", "main.ts");
const dir = mkdtempSync(join(tmpdir(), "iplookup-signals-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function serve(name: string) {
  return Bun.spawn([process.execPath, MAIN, "serve", "--host", "127.0.0.1", "--port", "0", "--admin-port", "off", "--workers", "2", "--state", join(dir, `${name}.db`)], {
    stdout: "ignore",
    stderr: "pipe",
  });
}

test("SIGTERM and SIGINT at moments during start-up: exit 0 every time", async () => {
  for (const [signal, delay] of [["SIGTERM", 60], ["SIGTERM", 150], ["SIGINT", 150], ["SIGTERM", 300]] as const) {
    const child = serve(`stop-${signal}-${delay}`);
    await Bun.sleep(delay);
    child.kill(signal);
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    expect({ signal, delay, code: await child.exited }).toEqual({ signal, delay, code: 0 });
    clearTimeout(timer);
  }
});

test("a SIGHUP during start-up is ignored: the server starts and answers", async () => {
  const child = serve("hangup");
  await Bun.sleep(100);
  child.kill("SIGHUP");
  const reader = (child.stderr as ReadableStream<Uint8Array>).getReader();
  let text = "";
  const deadline = Date.now() + 10_000;
  while (!/"listen":"([^"]+)"/.test(text) && Date.now() < deadline) {
    const chunk = await reader.read();
    if (chunk.done) break;
    text += new TextDecoder().decode(chunk.value);
  }
  const url = /"listen":"([^"]+)"/.exec(text)?.[1];
  expect(url).toBeDefined();
  expect((await fetch(`${url}healthz`)).status).toBe(200);
  child.kill("SIGTERM");
  expect(await child.exited).toBe(0);
});

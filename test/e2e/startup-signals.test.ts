/**
 * CONTRACT §12: signals at any moment. SIGTERM or SIGINT during start-up exits 0; a
 * SIGHUP before the data is loaded is ignored (nothing to reload yet), and the server
 * goes on starting.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
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

/**
 * Resolves once the process catches SIGHUP, SIGINT and SIGTERM (its SigCgt mask in /proc), the
 * first thing the program does. Before that the runtime itself is starting, and a
 * signal takes its default action, as for any program that has not run yet: that
 * window is a few milliseconds on an idle machine and can be a hundred on a busy one,
 * so the test's moments count from the handlers, not from the spawn.
 */
async function catchingSignals(pid: number): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const mask = /SigCgt:\s*([0-9a-f]+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    // Bits 0 (SIGHUP), 1 (SIGINT) and 14 (SIGTERM).
    if (mask && (BigInt(`0x${mask}`) & 0x4003n) === 0x4003n) return;
    if (Date.now() > deadline) throw new Error("the program never caught SIGHUP, SIGINT and SIGTERM");
    await Bun.sleep(1);
  }
}

test("SIGTERM and SIGINT at moments during start-up: exit 0 every time", async () => {
  for (const [signal, delay] of [["SIGTERM", 0], ["SIGINT", 0], ["SIGTERM", 20], ["SIGTERM", 60], ["SIGINT", 150], ["SIGTERM", 300]] as const) {
    const child = serve(`stop-${signal}-${delay}`);
    await catchingSignals(child.pid);
    await Bun.sleep(delay);
    child.kill(signal);
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    expect({ signal, delay, code: await child.exited }).toEqual({ signal, delay, code: 0 });
    clearTimeout(timer);
  }
});

test("a SIGHUP during start-up is ignored: the server starts and answers", async () => {
  const child = serve("hangup");
  await catchingSignals(child.pid);
  await Bun.sleep(50);
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

/**
 * Resolves once the process has run itself again with its allocator setting (its
 * environment names MIMALLOC_PURGE_DELAY), that is, while the new program is starting.
 */
async function reExecuted(pid: number): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!readFileSync(`/proc/${pid}/environ`, "latin1").split("\0").includes("MIMALLOC_PURGE_DELAY=1000")) {
    if (Date.now() > deadline) throw new Error("serve never ran itself again with its allocator setting");
    await Bun.sleep(0);
  }
}

test("a SIGHUP while serve runs itself again with its allocator setting is ignored: the new program starts and answers", async () => {
  const { MIMALLOC_PURGE_DELAY: _, ...env } = process.env;
  const child = Bun.spawn([process.execPath, MAIN, "serve", "--host", "127.0.0.1", "--port", "0", "--admin-port", "off", "--workers", "1", "--state", join(dir, "exec-hangup.db")], {
    stdout: "ignore",
    stderr: "pipe",
    env,
  });
  await reExecuted(child.pid);
  child.kill("SIGHUP");
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  const log = logReader(child.stderr as ReadableStream<Uint8Array>);
  const url = /"listen":"([^"]+)"/.exec(await log.until(/"listen":"[^"]+"/))?.[1];
  expect(url).toBeDefined();
  expect((await fetch(`${url}healthz`)).status).toBe(200);
  // Listening, it reloads on SIGHUP (the signal is not left ignored).
  child.kill("SIGHUP");
  expect(await log.until(/"data reloaded"/)).toContain('"data reloaded"');
  child.kill("SIGTERM");
  expect(await child.exited).toBe(0);
  clearTimeout(timer);
});

/** The log read as it comes: `until` resolves with all of it so far once it matches (or the log ends). */
function logReader(stream: ReadableStream<Uint8Array>) {
  const reader = stream.getReader();
  let text = "";
  return {
    async until(pattern: RegExp): Promise<string> {
      while (!pattern.test(text)) {
        const chunk = await reader.read();
        if (chunk.done) break;
        text += new TextDecoder().decode(chunk.value);
      }
      return text;
    },
  };
}

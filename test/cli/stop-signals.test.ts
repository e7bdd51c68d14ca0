import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * cleaningUpOnStop (CONTRACT §13): a stop signal that arrives while the work runs
 * synchronously waits for a turn of the event loop; the work ending must not drop it
 * with its handler.
 */
const root = mkdtempSync(join(tmpdir(), "iplookup-stop-signals-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const STOP_SIGNALS = new URL("../../src/cli/stop-signals.ts", import.meta.url).pathname;

test("SIGTERM during the work's last synchronous stretch: cleaned up, exit 143, nothing after the work runs", async () => {
  const cleaned = join(root, "cleaned");
  const after = join(root, "after");
  const script = join(root, "work.ts");
  writeFileSync(
    script,
    `import { writeFileSync } from "node:fs";
import { cleaningUpOnStop } from ${JSON.stringify(STOP_SIGNALS)};
await cleaningUpOnStop(
  () => writeFileSync(${JSON.stringify(cleaned)}, ""),
  async () => {
    await Bun.sleep(1);
    console.log("busy");
    const end = Date.now() + 2000;
    while (Date.now() < end) {}
  },
);
writeFileSync(${JSON.stringify(after)}, "");
await Bun.sleep(500);
`,
  );
  const child = Bun.spawn([process.execPath, script], { stdin: "ignore", stdout: "pipe", stderr: "inherit" });
  const reader = child.stdout.getReader();
  let out = "";
  while (!out.includes("busy")) {
    const { value, done } = await reader.read();
    if (done) break;
    out += new TextDecoder().decode(value);
  }
  expect(out).toContain("busy");
  child.kill("SIGTERM");
  expect(await child.exited).toBe(143);
  expect(existsSync(cleaned)).toBe(true);
  expect(existsSync(after)).toBe(false);
}, 30_000);

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

/** Runs a script that calls cleaningUpOnStop with `work`, sends SIGTERM once it prints "busy"; its exit code, and whether it cleaned up and ran what follows the work. */
async function stoppedDuring(name: string, work: string): Promise<{ code: number; cleaned: boolean; after: boolean }> {
  const cleaned = join(root, `${name}-cleaned`);
  const after = join(root, `${name}-after`);
  const script = join(root, `${name}.ts`);
  writeFileSync(
    script,
    `import { writeFileSync } from "node:fs";
import { cleaningUpOnStop } from ${JSON.stringify(STOP_SIGNALS)};
await cleaningUpOnStop(
  () => writeFileSync(${JSON.stringify(cleaned)}, ""),
  ${work},
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
  return { code: await child.exited, cleaned: existsSync(cleaned), after: existsSync(after) };
}

test("SIGTERM once the work has committed its result (a rename into place): no clean-up, the command finishes, exit 0", async () => {
  const outcome = await stoppedDuring(
    "committed",
    `async (committed) => {
    await Bun.sleep(1);
    committed();
    console.log("busy");
    const end = Date.now() + 2000;
    while (Date.now() < end) {}
    await Bun.sleep(1);
  }`,
  );
  expect(outcome).toEqual({ code: 0, cleaned: false, after: true });
}, 30_000);

test("SIGTERM during the work's last synchronous stretch: cleaned up, exit 143, nothing after the work runs", async () => {
  const outcome = await stoppedDuring(
    "uncommitted",
    `async () => {
    await Bun.sleep(1);
    console.log("busy");
    const end = Date.now() + 2000;
    while (Date.now() < end) {}
  }`,
  );
  expect(outcome).toEqual({ code: 143, cleaned: true, after: false });
}, 30_000);

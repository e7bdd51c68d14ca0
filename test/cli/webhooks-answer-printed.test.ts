import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cli } from "../support/server-process.ts";

/**
 * `webhooks test` and `webhooks deliveries` print what a receiver answered: its bytes
 * are shown with every control character as `?`, so that an answer cannot move the
 * cursor, retitle the window or otherwise act on the operator's terminal.
 */
const dir = mkdtempSync(join(tmpdir(), "iplookup-webhook-answer-"));
const ESCAPES = "\x1b[2J\x1b]0;owned\x07\x9b31mred\r\nline";
const receiver = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response(ESCAPES, { status: 500 }) });
afterAll(() => {
  receiver.stop(true);
  rmSync(dir, { recursive: true, force: true });
});

test("a receiver's answer with terminal escapes is printed with them as ?", async () => {
  const state = join(dir, "state.db");
  const added = cli(["webhooks", "add", `http://127.0.0.1:${receiver.port}/hook`, "--events", "key.created", "--json"], { IPLOOKUP_STATE: state });
  expect(added.code).toBe(0);
  const id = (JSON.parse(added.stdout) as { id: string }).id;
  // A child process, so that this one's receiver answers meanwhile.
  const child = Bun.spawn([process.execPath, join(import.meta.dir, "..", "..", "src", "main.ts"), "webhooks", "test", id], { env: { ...process.env, IPLOOKUP_STATE: state }, stdout: "pipe", stderr: "pipe" });
  const [stdout, code] = await Promise.all([new Response(child.stdout).text(), child.exited]);
  expect(code).toBe(1);
  expect(stdout).toContain("HTTP 500");
  expect(stdout).toContain("Answer (first 256 bytes): ?[2J?]0;owned??31mred??line");
  expect(stdout).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f]/);
  const listed = cli(["webhooks", "deliveries", id], { IPLOOKUP_STATE: state });
  expect(listed.code).toBe(0);
  expect(listed.stdout).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f]/);
});

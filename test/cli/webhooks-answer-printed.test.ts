import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { runCliInProcess } from "../support/in-process-cli.ts";
import { cli } from "../support/server-process.ts";

/**
 * `webhooks test` and `webhooks deliveries` print what a receiver answered: its bytes
 * are shown with every control and bidirectional character written out (`\u001b`,
 * `\u202e`), as every table of the command line shows them, so that an answer cannot
 * move the cursor, retitle the window, reorder the line or otherwise act on the
 * operator's terminal.
 */
const dir = mkdtempSync(join(tmpdir(), "iplookup-webhook-answer-"));
const ESCAPES = "\x1b[2J\x1b]0;owned\x07\x9b31mred\r\nline";
const receiver = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response(ESCAPES, { status: 500 }) });
/** Answers 200 with a right-to-left override before its last words. */
const reorderer = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("ok \u202eevil\u2066 end", { status: 200 }) });
afterAll(() => {
  receiver.stop(true);
  reorderer.stop(true);
  rmSync(dir, { recursive: true, force: true });
});
/** No control character (but the line feeds between lines) and no bidirectional control. */
const TERMINAL_UNSAFE = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

test("a receiver's answer with terminal escapes is printed with them written out", async () => {
  const state = join(dir, "state.db");
  const added = cli(["webhooks", "add", `http://127.0.0.1:${receiver.port}/hook`, "--events", "key.created", "--json"], { IPLOOKUP_STATE: state });
  expect(added.code).toBe(0);
  const id = (JSON.parse(added.stdout) as { id: string }).id;
  // A child process, so that this one's receiver answers meanwhile.
  const child = Bun.spawn([process.execPath, join(import.meta.dir, "..", "..", "src", "main.ts"), "webhooks", "test", id], { env: { ...process.env, IPLOOKUP_STATE: state }, stdout: "pipe", stderr: "pipe" });
  const [stdout, code] = await Promise.all([new Response(child.stdout).text(), child.exited]);
  expect(code).toBe(1);
  expect(stdout).toContain("HTTP 500");
  expect(stdout).toContain("Answer (first 256 bytes): \\u001b[2J\\u001b]0;owned\\u0007\\u009b31mred\\u000d\\u000aline\n");
  expect(stdout).not.toMatch(TERMINAL_UNSAFE);
  const listed = cli(["webhooks", "deliveries", id], { IPLOOKUP_STATE: state });
  expect(listed.code).toBe(0);
  expect(listed.stdout).toContain("\\u001b[2J\\u001b]0;owned\\u0007\\u009b31mred\\u000d\\u000aline");
  expect(listed.stdout).not.toMatch(TERMINAL_UNSAFE);
});

test("a receiver's answer with bidirectional controls (U+202E) is printed with them written out", async () => {
  const state = join(dir, "bidi.db");
  const run = (...args: string[]) => runCliInProcess(join(dir, "no-data.db"), [...args, "--state", state]);
  const added = await run("webhooks", "add", `http://127.0.0.1:${reorderer.port}/hook`, "--events", "key.created", "--json");
  expect(added.code).toBe(0);
  const id = (JSON.parse(added.stdout) as { id: string }).id;
  const tested = await run("webhooks", "test", id);
  expect(tested.code).toBe(0);
  expect(tested.stdout).toContain("Answer (first 256 bytes): ok \\u202eevil\\u2066 end\n");
  expect(tested.stdout).not.toMatch(TERMINAL_UNSAFE);
  // --json keeps the answer as it came: a program reads it, not a terminal.
  const json = await run("webhooks", "test", id, "--json");
  expect((JSON.parse(json.stdout) as { attempt: { response: string } }).attempt.response).toBe("ok \u202eevil\u2066 end");
});

test("'webhooks deliveries' shows every attempt: its time, status or error, duration and answer", async () => {
  const state = join(dir, "attempts.db");
  const store = SqliteStore.open(state);
  const { webhook } = await store.webhooks.createWebhook("http://127.0.0.1:9/hook", ["key.created"]);
  const T0 = Date.parse("2026-11-25T08:00:00.000Z");
  await store.webhooks.addEvent({ id: "msg_twice", type: "key.created", body: "{}", createdAt: new Date(T0).toISOString() });
  const [due] = await store.webhooks.claimDeliveries({ limit: 10, nowMs: T0, leaseMs: 60_000 });
  const attempt = { deliveryId: due!.deliveryId, eventId: due!.eventId, webhookId: due!.webhookId, response: null, error: null, state: "pending" as const };
  await store.webhooks.recordAttempt({ ...attempt, attempt: 1, at: new Date(T0).toISOString(), status: 503, durationMs: 41.6, response: "busy\u202e, try later\n", nextAttemptAt: T0 + 30_000 });
  await store.webhooks.recordAttempt({ ...attempt, attempt: 2, at: new Date(T0 + 30_000).toISOString(), status: null, durationMs: 10_000, error: "timed out after 10 s", nextAttemptAt: T0 + 90_000 });
  await store.close();
  const listed = await runCliInProcess(join(dir, "no-data.db"), ["webhooks", "deliveries", webhook.id, "--state", state]);
  expect(listed.code).toBe(0);
  const rows = listed.stdout.trimEnd().split("\n").map((line) => line.split(/ {2,}/));
  expect(rows).toEqual([
    ["EVENT", "TYPE", "STATE", "ATTEMPT", "AT", "RESULT", "DURATION", "ANSWER"],
    ["msg_twice", "key.created", "pending", "1", "2026-11-25T08:00:00.000Z", "HTTP 503", "42 ms", "busy\\u202e, try later\\u000a"],
    ["msg_twice", "key.created", "pending", "2", "2026-11-25T08:00:30.000Z", "timed out after 10 s", "10000 ms"],
    ["msg_twice", "key.created", "pending", "next", "2026-11-25T08:01:30.000Z", "due"],
  ]);
});

import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { runCliInProcess } from "../support/in-process-cli.ts";

/**
 * `iplookup webhooks test ID` exits 0 only when the receiver answered 2xx, for scripts:
 * 1 when it answered otherwise or not at all, also when a running server took the test
 * event first and made the attempt (the command then waits for that attempt and shows
 * it, rather than exit 0 on "queued").
 */
const dir = mkdtempSync(join(tmpdir(), "iplookup-webhooks-test-exit-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * A state whose every new delivery is leased at once, as a running server's claim would
 * lease it: the command's own claim finds nothing, and `answer` then records the attempt
 * that server made, as it would.
 */
async function takenByAServer(name: string, answer: { status: number | null; error?: string }): Promise<{ code: number; stdout: string }> {
  const state = join(dir, `${name}.db`);
  const store = SqliteStore.open(state);
  const { webhook } = await store.webhooks.createWebhook("http://127.0.0.1:9/hook", ["key.created"]);
  const db = new Database(state);
  db.run("CREATE TRIGGER leased AFTER INSERT ON webhook_deliveries BEGIN UPDATE webhook_deliveries SET lease_until = 9e15 WHERE id = new.id; END");
  const run = runCliInProcess(join(dir, "no-data.db"), ["webhooks", "test", webhook.id, "--state", state]);
  let delivery: { id: number; event_id: string; webhook_id: string } | null = null;
  while (!(delivery = db.query<{ id: number; event_id: string; webhook_id: string }, []>("SELECT id, event_id, webhook_id FROM webhook_deliveries").get())) await Bun.sleep(20);
  await Bun.sleep(100);
  const now = new Date().toISOString();
  await store.webhooks.recordAttempt({
    deliveryId: delivery.id,
    eventId: delivery.event_id,
    webhookId: delivery.webhook_id,
    attempt: 1,
    at: now,
    status: answer.status,
    durationMs: 12,
    response: answer.status === null ? null : "from the receiver",
    error: answer.error ?? null,
    state: answer.status !== null && answer.status < 300 ? "delivered" : "pending",
    nextAttemptAt: answer.status !== null && answer.status < 300 ? null : Date.now() + 30_000,
  });
  const done = await run;
  db.close();
  await store.close();
  return done;
}

test("a server's attempt that got a 500 exits 1, shown as the command's own would be", async () => {
  const { code, stdout } = await takenByAServer("500", { status: 500 });
  expect(stdout).toContain(": HTTP 500 in 12 ms.");
  expect(stdout).toContain("Answer (first 256 bytes): from the receiver");
  expect(code).toBe(1);
});

test("a server's attempt that got no answer exits 1", async () => {
  const { code, stdout } = await takenByAServer("none", { status: null, error: "connection refused" });
  expect(stdout).toContain(": no answer (connection refused).");
  expect(code).toBe(1);
});

test("a server's attempt that got a 204 exits 0", async () => {
  const { code, stdout } = await takenByAServer("204", { status: 204 });
  expect(stdout).toContain(": HTTP 204 in 12 ms.");
  expect(code).toBe(0);
});

test("the command's own attempt: 500 or no answer exits 1, 2xx exits 0", async () => {
  let status = 500;
  const receiver = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("r", { status }) });
  try {
    const state = join(dir, "own.db");
    const store = SqliteStore.open(state);
    const { webhook } = await store.webhooks.createWebhook(`http://127.0.0.1:${receiver.port}/hook`, ["key.created"]);
    const { webhook: nobody } = await store.webhooks.createWebhook("http://127.0.0.1:9/hook", ["key.created"]);
    await store.close();
    const run = (id: string, ...more: string[]) => runCliInProcess(join(dir, "no-data.db"), ["webhooks", "test", id, "--state", state, ...more]);
    expect((await run(webhook.id)).code).toBe(1);
    expect((await run(webhook.id, "--json")).code).toBe(1);
    expect((await run(nobody.id)).code).toBe(1);
    status = 200;
    expect((await run(webhook.id)).code).toBe(0);
    expect((await run(webhook.id, "--json")).code).toBe(0);
  } finally {
    receiver.stop(true);
  }
});

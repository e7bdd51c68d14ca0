import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cli, startServerProcess, type ServerProcess } from "../support/server-process.ts";
import { StuckReceiver } from "../support/stuck-receiver.ts";

/**
 * SIGTERM while a webhook attempt waits for a receiver that never answers (CONTRACT §8):
 * the server stops at once, not when the attempt would time out (10 s), and the attempt
 * cut short is left for a retry, not recorded as a failure.
 */
const dir = mkdtempSync(join(tmpdir(), "iplookup-webhook-stop-"));
const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  rmSync(dir, { recursive: true, force: true });
});

test("SIGTERM with a webhook attempt in flight exits 0 promptly; the attempt is not logged as a failed one", async () => {
  const state = join(dir, "state.db");
  const stuck = new StuckReceiver();
  cleanups.push(() => stuck.stop());
  const added = cli(["webhooks", "add", stuck.url, "--events", "key.created", "--json"], { IPLOOKUP_STATE: state });
  expect(added.code).toBe(0);
  const hook = JSON.parse(added.stdout) as { id: string };
  const server: ServerProcess = await startServerProcess(["--state", state, "--admin-port", "off"]);
  cleanups.push(() => server.stop("SIGKILL"));
  expect(cli(["keys", "create", "--name", "hooked", "--json"], { IPLOOKUP_STATE: state }).code).toBe(0);
  const deadline = performance.now() + 10_000;
  while (stuck.open.size === 0) {
    if (performance.now() > deadline) throw new Error("the server never sent the delivery");
    await Bun.sleep(20);
  }
  await Bun.sleep(200); // the request is written; the answer never comes
  const began = performance.now();
  expect(await server.stop("SIGTERM")).toBe(0);
  expect(performance.now() - began).toBeLessThan(3000);
  expect(server.stderr()).toContain('"stopped"');
  expect(server.stderr()).not.toContain("webhook delivery failed");
  // Neither delivered nor failed: its lease runs out and a server sends it again.
  const log = cli(["webhooks", "deliveries", hook.id, "--json"], { IPLOOKUP_STATE: state });
  expect(log.code).toBe(0);
  expect(JSON.parse(log.stdout)).toMatchObject([{ event_type: "key.created", state: "pending", attempts: [] }]);
}, 30_000);

import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cli, startServerProcess } from "../support/server-process.ts";
import { WebhookReceiver } from "../support/webhook-receiver.ts";

/**
 * A test event sent through a server's admin API is one of that server's attempts: the
 * public /metrics counts it (iplookup_webhook_attempts_total, docs/webhooks.md).
 */
const dir = mkdtempSync(join(tmpdir(), "iplookup-webhook-metrics-"));
const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  rmSync(dir, { recursive: true, force: true });
});

function attempts(metrics: string, outcome: string): number {
  return Number(new RegExp(`^iplookup_webhook_attempts_total\\{outcome="${outcome}"\\} (\\d+)$`, "m").exec(metrics)?.[1]);
}

test("test events sent through the admin API are counted in /metrics by outcome", async () => {
  const state = join(dir, "state.db");
  const env = { IPLOOKUP_STATE: state };
  let secret = "";
  const receiver = new WebhookReceiver(() => secret).start();
  cleanups.push(() => receiver.stop());
  receiver.answer({ status: 500, body: "no" }, { status: 500, body: "no" });
  const added = cli(["webhooks", "add", receiver.url, "--events", "data.updated", "--json"], env);
  expect(added.code).toBe(0);
  const hook = JSON.parse(added.stdout) as { id: string; secret: string };
  secret = hook.secret;
  const created = cli(["admin", "create", "--name", "ops", "--json"], env);
  const token = (JSON.parse(created.stdout) as { token: string }).token;
  const server = await startServerProcess(["--state", state, "--admin-port", "0"]);
  cleanups.push(() => server.stop("SIGKILL"));
  const admin = /"admin":"([^"]+)"/.exec(server.stderr())![1]!.replace(/\/$/, "");
  const before = await (await fetch(`${server.url}/metrics`)).text();
  expect(attempts(before, "retry")).toBe(0);
  for (let i = 0; i < 2; i++) {
    const tested = await fetch(`${admin}/admin/v1/webhooks/${hook.id}/test`, { method: "POST", headers: { authorization: `Bearer ${token}` } });
    expect(((await tested.json()) as { attempt: unknown }).attempt).toMatchObject({ status: 500, state: "pending" });
  }
  const tested = await fetch(`${admin}/admin/v1/webhooks/${hook.id}/test`, { method: "POST", headers: { authorization: `Bearer ${token}` } });
  expect(((await tested.json()) as { attempt: unknown }).attempt).toMatchObject({ status: 200, state: "delivered" });
  const after = await (await fetch(`${server.url}/metrics`)).text();
  expect(attempts(after, "retry")).toBe(2);
  expect(attempts(after, "delivered")).toBe(1);
  expect(receiver.received).toHaveLength(3);
}, 30_000);

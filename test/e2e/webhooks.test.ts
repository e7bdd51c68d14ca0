import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { postgresAvailable, testStates } from "../support/postgres.ts";
import { cli, startServerProcess, type ServerProcess } from "../support/server-process.ts";
import { WebhookReceiver, type Received } from "../support/webhook-receiver.ts";

/**
 * Webhooks end to end (CONTRACT §16): real `serve` processes with worker threads, their
 * admin listeners, the CLI, and a receiver on loopback that checks every signature with
 * its own HMAC.
 */
const dir = mkdtempSync(join(tmpdir(), "iplookup-webhooks-"));
const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  rmSync(dir, { recursive: true, force: true });
});
let files = 0;

function run(args: string[], state: string) {
  return cli(args, { IPLOOKUP_STATE: state });
}

/** The CLI as a child process, while this process keeps serving the receiver. */
async function runAsync(args: string[], state: string) {
  const child = Bun.spawn([process.execPath, join(import.meta.dir, "..", "..", "src", "main.ts"), ...args], { env: { ...process.env, IPLOOKUP_STATE: state }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { code, stdout, stderr };
}

function adminToken(state: string): string {
  const created = run(["admin", "create", "--name", "ops", "--json"], state);
  expect(created.code).toBe(0);
  return (JSON.parse(created.stdout) as { token: string }).token;
}

async function serve(state: string, workers = 2): Promise<{ server: ServerProcess; admin: string }> {
  const server = await startServerProcess(["--state", state, "--workers", String(workers), "--admin-port", "0"]);
  cleanups.push(() => server.stop("SIGKILL"));
  return { server, admin: /"admin":"([^"]+)"/.exec(server.stderr())![1]!.replace(/\/$/, "") };
}

function adminCall(admin: string, token: string) {
  return async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${admin}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text === "" ? null : (JSON.parse(text) as Record<string, any>) };
  };
}

function lookupBatch(url: string, key: string, size: number) {
  const ips = Array.from({ length: size }, (_, i) => `8.8.${i}.8`);
  return fetch(`${url}/v1/lookup/batch`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ ips }) });
}

/** The receiver's requests of one type, parsed. */
function ofType(received: readonly Received[], type: string) {
  return received.filter((r) => JSON.parse(r.body).type === type).map((r) => ({ ...r, json: JSON.parse(r.body) }));
}

async function until(done: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error("not in time");
    await Bun.sleep(50);
  }
}

function newKey(state: string, plan: string): { id: string; key: string } {
  const created = run(["keys", "create", "--name", "acme", "--plan", plan, "--json"], state);
  expect(created.code).toBe(0);
  return JSON.parse(created.stdout);
}

describe("webhooks on a SQLite state file, two worker threads", async () => {
  const state = join(dir, `state-${++files}.db`);
  expect(run(["plans", "set", "hundred", "--max-batch", "100", "--monthly-units", "100", "--rate-limit", "unlimited"], state).code).toBe(0);
  const token = adminToken(state);
  let secret = "";
  /** Every webhook secret issued in this state, for the log's check. */
  const secrets: string[] = [];
  const receiver = new WebhookReceiver(() => secret).start();
  cleanups.push(() => receiver.stop());
  const { server, admin } = await serve(state);
  const call = adminCall(admin, token);

  test("the admin API: created with the secret once, listed without it, refused when bad, removed", async () => {
    const created = await call("POST", "/admin/v1/webhooks", { url: receiver.url, events: ["key.created", "usage.threshold", "key.revoked"] });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^wh_/),
      url: receiver.url,
      events: ["usage.threshold", "key.created", "key.revoked"],
      created_at: expect.any(String),
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{32}$/),
    });
    secret = created.body!.secret;
    secrets.push(secret);
    const listed = await call("GET", "/admin/v1/webhooks");
    expect(listed.body!.webhooks).toEqual([{ id: created.body!.id, url: receiver.url, events: created.body!.events, created_at: created.body!.created_at }]);
    expect(JSON.stringify(listed.body)).not.toContain(secret);

    for (const [body, words] of [
      [{ url: "ftp://127.0.0.1/x", events: ["key.created"] }, "http:// or https://"],
      [{ url: "http://user:pw@127.0.0.1/x", events: ["key.created"] }, "credentials"],
      [{ url: "not a url", events: ["key.created"] }, "spaces"],
      [{ url: receiver.url, events: ["key.exploded"] }, "is not an event"],
      [{ url: receiver.url, events: [] }, ""],
      [{ url: "http://127.0.0.1/\u0000", events: ["key.created"] }, "control"],
    ] as const) {
      const refused = await call("POST", "/admin/v1/webhooks", body);
      expect({ body, status: refused.status, code: refused.body!.code }).toEqual({ body, status: 400, code: "invalid_request" });
      expect(refused.body!.detail).toContain(words);
    }
    expect((await call("GET", "/admin/v1/webhooks")).body!.webhooks).toHaveLength(1);

    const extra = await call("POST", "/admin/v1/webhooks", { url: "http://127.0.0.1:9/gone", events: ["data.updated"] });
    expect((await call("DELETE", `/admin/v1/webhooks/${extra.body!.id}`)).status).toBe(204);
    expect((await call("DELETE", `/admin/v1/webhooks/${extra.body!.id}`)).body).toMatchObject({ status: 404, code: "not_found" });
    expect((await call("POST", "/admin/v1/webhooks/wh_nope/test")).status).toBe(404);
    expect((await call("GET", "/admin/v1/webhooks/wh_nope/deliveries")).status).toBe(404);
    expect((await call("PUT", `/admin/v1/webhooks/${created.body!.id}`)).status).toBe(405);
    const plain = await fetch(`${admin}/admin/v1/webhooks`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "text/plain" }, body: "{}" });
    expect(plain.status).toBe(415);
    const notJson = await fetch(`${admin}/admin/v1/webhooks`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: "{" });
    expect(((await notJson.json()) as { code: string }).code).toBe("invalid_json");
    const ownSecret = await call("POST", "/admin/v1/webhooks", { url: receiver.url, events: ["key.created"], secret: "mine" });
    expect(ownSecret.body!.code).toBe("invalid_request");
    // An API key is no admin token.
    const apiKey = newKey(state, "free");
    expect((await adminCall(admin, apiKey.key)("GET", "/admin/v1/webhooks")).status).toBe(401);
    expect((await call("GET", "/admin/v1/webhooks")).body!.webhooks).toHaveLength(1);
  });

  test("send a test event: delivered at once, signed; the delivery log shows it", async () => {
    const [hook] = (await call("GET", "/admin/v1/webhooks")).body!.webhooks;
    const before = receiver.received.length;
    const tested = await call("POST", `/admin/v1/webhooks/${hook.id}/test`);
    expect(tested.status).toBe(200);
    const eventId = tested.body!.event_id as string;
    expect(tested.body).toMatchObject({ event_id: expect.stringMatching(/^msg_/), attempt: { attempt: 1, status: 200, response: "ok", error: null, state: "delivered" } });
    const got = receiver.received[before]!;
    expect(got.signatureValid).toBe(true);
    expect(got.headers["webhook-id"]).toBe(eventId);
    expect(JSON.parse(got.body)).toMatchObject({ type: "webhook.test", data: { webhook: { id: hook.id } } });
    const log = await call("GET", `/admin/v1/webhooks/${hook.id}/deliveries`);
    expect(log.body!.deliveries[0]).toMatchObject({ event_id: eventId, event_type: "webhook.test", state: "delivered", attempts: [{ attempt: 1, status: 200 }] });
  });

  test("'webhooks deliveries --json' and 'webhooks test --json' print the admin API's shapes, snake_case", async () => {
    const [hook] = (await call("GET", "/admin/v1/webhooks")).body!.webhooks;
    const tested = await runAsync(["webhooks", "test", hook.id, "--json"], state);
    expect(tested.code).toBe(0);
    expect(JSON.parse(tested.stdout)).toEqual({
      event_id: expect.stringMatching(/^msg_/),
      attempt: { attempt: 1, status: 200, duration_ms: expect.any(Number), response: "ok", error: null, state: "delivered" },
    });
    const printed = run(["webhooks", "deliveries", hook.id, "--json"], state);
    expect(printed.code).toBe(0);
    expect(JSON.parse(printed.stdout)).toEqual((await call("GET", `/admin/v1/webhooks/${hook.id}/deliveries`)).body!.deliveries);
    expect(JSON.parse(printed.stdout)[0]).toMatchObject({ event_id: JSON.parse(tested.stdout).event_id, event_type: "webhook.test", next_attempt_at: null });
  });

  test("key.created from the admin API and key.revoked from the CLI reach the receiver, signed, without the key's secret", async () => {
    const created = await call("POST", "/admin/v1/keys", { name: "hooked", plan: "free" });
    const revoked = run(["keys", "revoke", created.body!.id], state);
    expect(revoked.code).toBe(0);
    await until(() => ofType(receiver.received, "key.revoked").length === 1);
    await until(() => ofType(receiver.received, "key.created").some((r) => r.json.data.key.id === created.body!.id));
    const made = ofType(receiver.received, "key.created").find((r) => r.json.data.key.id === created.body!.id);
    expect(made!.json.data).toEqual({ key: { id: created.body!.id, name: "hooked", plan: "free" } });
    expect(made!.signatureValid).toBe(true);
    expect(ofType(receiver.received, "key.revoked")[0]!.signatureValid).toBe(true);
    for (const r of receiver.received) {
      expect(r.body).not.toContain(created.body!.key);
      expect(r.body).not.toContain(token);
      expect(r.body).not.toContain(secret);
    }
  });

  test("usage.threshold: 80, 90 and 100% once each, however many charges race on two threads", async () => {
    const key = newKey(state, "hundred");
    const responses = await Promise.all(Array.from({ length: 60 }, () => lookupBatch(server.url, key.key, 4)));
    expect(responses.filter((r) => r.status === 200)).toHaveLength(25);
    await until(() => ofType(receiver.received, "usage.threshold").filter((r) => r.json.data.key.id === key.id).length >= 3);
    await Bun.sleep(1500); // a second pass of the deliverer: nothing more comes
    const events = ofType(receiver.received, "usage.threshold").filter((r) => r.json.data.key.id === key.id);
    expect(events.map((r) => r.json.data.threshold).sort()).toEqual([100, 80, 90]);
    expect(new Set(events.map((r) => r.headers["webhook-id"])).size).toBe(3);
    for (const event of events) {
      expect(event.signatureValid).toBe(true);
      expect(event.json.data.units.limit).toBe(100);
      expect(event.json.data.units.used).toBeGreaterThanOrEqual(event.json.data.threshold);
    }
  });

  test("an answer never waits for a slow receiver", async () => {
    const key = newKey(state, "hundred");
    receiver.answer(...Array.from({ length: 6 }, () => ({ status: 200, delayMs: 20_000 })));
    const timings: number[] = [];
    for (let i = 0; i < 10; i++) {
      const began = performance.now();
      expect((await lookupBatch(server.url, key.key, 10)).status).toBe(200);
      timings.push(performance.now() - began);
    }
    await until(() => ofType(receiver.received, "usage.threshold").filter((r) => r.json.data.key.id === key.id).length >= 1);
    // The receiver holds each delivery 20 s (the sender gives up after 10); the lookups
    // that crossed the lines were answered long before either.
    expect(Math.max(...timings)).toBeLessThan(8000);
    receiver.clearAnswers();
  });

  test("the CLI: add prints the secret once, list hides it, test shows the answer, remove; bad input exits 2, an unknown id 1", async () => {
    // The receiver's URL is the admin API's webhook's already: one receiver, one webhook.
    const twice = run(["webhooks", "add", receiver.url, "--events", "data.updated"], state);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain("has this URL already");
    const added = run(["webhooks", "add", `${receiver.url}/cli`, "--events", "data.updated,data.update_failed", "--json"], state);
    expect(added.code).toBe(0);
    const hook = JSON.parse(added.stdout) as { id: string; secret: string; events: string[] };
    expect(hook.events).toEqual(["data.updated", "data.update_failed"]);
    expect(hook.secret).toMatch(/^whsec_/);
    const listed = run(["webhooks", "list"], state);
    expect(listed.stdout).toContain(hook.id);
    expect(listed.stdout).not.toContain(hook.secret);
    secret = hook.secret;
    secrets.push(secret);
    // Not spawnSync: the receiver answers from this process's event loop.
    const tested = await runAsync(["webhooks", "test", hook.id], state);
    expect(tested.code).toBe(0);
    expect(tested.stdout).toContain("HTTP 200");
    expect(receiver.received.at(-1)!.signatureValid).toBe(true);
    expect(run(["webhooks", "deliveries", hook.id], state).stdout).toContain("webhook.test");
    expect(run(["webhooks", "add", "ftp://x/y", "--events", "data.updated"], state).code).toBe(2);
    expect(run(["webhooks", "add", receiver.url, "--events", "nope"], state).code).toBe(2);
    expect(run(["webhooks", "add", receiver.url], state).code).toBe(2);
    expect(run(["webhooks", "remove", hook.id], state).code).toBe(0);
    const again = run(["webhooks", "remove", hook.id], state);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`no webhook ${hook.id}`);
    expect(run(["webhooks", "test", "wh_nope"], state).code).toBe(1);
  });

  test("no secret in the server's log: not a webhook's, not the admin token, not an API key", async () => {
    const key = newKey(state, "free");
    expect((await lookupBatch(server.url, key.key, 1)).status).toBe(200);
    await Bun.sleep(1200);
    const log = server.stderr();
    expect(log).toContain("webhook delivered");
    expect(secrets).toHaveLength(2);
    for (const hidden of [...secrets, ...secrets.map((s) => s.slice("whsec_".length)), token, key.key]) expect(log).not.toContain(hidden);
    expect(log).not.toContain(receiver.url);
    // /metrics counts the attempts by outcome, and shows no secret either.
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    const delivered = Number(/^iplookup_webhook_attempts_total\{outcome="delivered"\} (\d+)$/m.exec(metrics)?.[1]);
    expect(delivered).toBeGreaterThanOrEqual(5);
    expect(metrics).toMatch(/^iplookup_webhook_attempts_total\{outcome="given_up"\} 0$/m);
    for (const hidden of secrets) expect(metrics).not.toContain(hidden);
  });
});

test("key.expiring: a key created with an expiry within 7 days is announced once, signed (test/access/key-service-expiring.test.ts shows it is recorded at creation); webhooks are in the audit log without their secret", async () => {
  const state = join(dir, `state-${++files}.db`);
  let secret = "";
  const receiver = new WebhookReceiver(() => secret).start();
  cleanups.push(() => receiver.stop());
  const added = run(["webhooks", "add", receiver.url, "--events", "key.expiring", "--json"], state);
  expect(added.code).toBe(0);
  secret = (JSON.parse(added.stdout) as { secret: string }).secret;
  const expiresAt = new Date(Date.now() + 3 * 86_400_000).toISOString();
  const soon = run(["keys", "create", "--name", "soon", "--expires-at", expiresAt, "--json"], state);
  expect(soon.code).toBe(0);
  const later = run(["keys", "create", "--name", "later", "--expires-at", new Date(Date.now() + 30 * 86_400_000).toISOString(), "--json"], state);
  expect(later.code).toBe(0);
  const soonId = (JSON.parse(soon.stdout) as { id: string }).id;
  await serve(state, 1);
  await until(() => ofType(receiver.received, "key.expiring").length === 1);
  const [event] = ofType(receiver.received, "key.expiring");
  expect(event!.signatureValid).toBe(true);
  expect(event!.json.data).toMatchObject({ key: { id: soonId, name: "soon" }, expires_at: expiresAt });
  const audit = run(["audit", "--json"], state);
  expect(audit.code).toBe(0);
  const { entries } = JSON.parse(audit.stdout) as { entries: { action: string; actor: string; changes: Record<string, unknown> }[] };
  expect(entries.find((entry) => entry.action === "webhook.created")).toMatchObject({ actor: "cli", changes: { url: { from: null, to: `${new URL(receiver.url).origin}/…` }, events: { from: null, to: ["key.expiring"] } } });
  expect(audit.stdout).not.toContain(secret);
});

test("events recorded while no server runs, or while the receiver is away, are delivered once both are back", async () => {
  const state = join(dir, `state-${++files}.db`);
  let secret = "";
  const receiver = new WebhookReceiver(() => secret).start();
  cleanups.push(() => receiver.stop());
  const added = run(["webhooks", "add", receiver.url, "--events", "key.created,key.rotated", "--json"], state);
  secret = (JSON.parse(added.stdout) as { secret: string }).secret;
  // No server: the event waits in the state file.
  const key = newKey(state, "free");
  const first = await serve(state, 1);
  await until(() => ofType(receiver.received, "key.created").length === 1);
  expect(ofType(receiver.received, "key.created")[0]!.json.data.key.id).toBe(key.id);
  // The receiver goes away; a rotation's delivery fails and waits for its retry.
  await receiver.stop();
  expect(run(["keys", "rotate", key.id], state).code).toBe(0);
  await until(() => first.server.stderr().includes("webhook delivery failed; will retry"));
  expect(await first.server.stop("SIGTERM")).toBe(0);
  // Both come back; the retry (due 30 s after the first try) is sent by the new server.
  receiver.start();
  await serve(state, 1);
  await until(() => ofType(receiver.received, "key.rotated").length === 1, 75_000);
  const [rotated] = ofType(receiver.received, "key.rotated");
  expect(rotated!.signatureValid).toBe(true);
  expect(rotated!.body).not.toContain("ipl_");
}, 150_000);

const states = testStates();
describe.skipIf(!postgresAvailable)("webhooks on PostgreSQL, two servers sharing it", async () => {
  test("thresholds fire once across both servers, and each event is delivered once by the fleet", async () => {
    const state = await states.fresh();
    expect(run(["plans", "set", "hundred", "--max-batch", "100", "--monthly-units", "100", "--rate-limit", "unlimited"], state).code).toBe(0);
    let secret = "";
    const receiver = new WebhookReceiver(() => secret).start();
    cleanups.push(() => receiver.stop());
    const added = run(["webhooks", "add", receiver.url, "--events", "usage.threshold,key.created", "--json"], state);
    secret = (JSON.parse(added.stdout) as { secret: string }).secret;
    const [a, b] = [await serve(state), await serve(state)];
    const key = newKey(state, "hundred");
    await Bun.sleep(300);
    const responses = await Promise.all(Array.from({ length: 60 }, (_, i) => lookupBatch((i % 2 ? a : b).server.url, key.key, 4)));
    expect(responses.filter((r) => r.status === 200)).toHaveLength(25);
    await until(() => ofType(receiver.received, "usage.threshold").length >= 3 && ofType(receiver.received, "key.created").length >= 1);
    await Bun.sleep(2500); // both servers' deliverers pass again: nothing is sent twice
    const events = ofType(receiver.received, "usage.threshold");
    expect(events.map((r) => r.json.data.threshold).sort()).toEqual([100, 80, 90]);
    expect(ofType(receiver.received, "key.created")).toHaveLength(1);
    const ids = receiver.received.map((r) => r.headers["webhook-id"]);
    expect(new Set(ids).size).toBe(ids.length);
    expect(receiver.received.every((r) => r.signatureValid)).toBe(true);
  });
});

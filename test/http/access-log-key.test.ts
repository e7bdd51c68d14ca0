import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KeyCache } from "../../src/access/key-cache.ts";
import { createApp } from "../../src/http/app.ts";
import { PUBLIC_ROUTES } from "../../src/http/routes.ts";
import { requestHandler } from "../../src/http/server.ts";
import { createLogger } from "../../src/log/logger.ts";
import { Metrics } from "../../src/metrics/metrics.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import type { KeyControls } from "../../src/store/store.ts";
import { defaultIndex } from "../support/default-data.ts";

/**
 * The access log's key_id, in-process through the server's own request handler: the key
 * is named for every request whose secret the server knows, refusals after the key was
 * found included (its own rate, media type, controls, quota, an old secret past its
 * grace); null where no key is known (none sent, an unknown or revoked secret).
 */
const dir = mkdtempSync(join(tmpdir(), "iplookup-access-key-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const PEER = "198.51.100.7";
const NO_CONTROLS: KeyControls = { expiresAt: null, allowedCidrs: null, allowedOrigins: null, metadata: null };

test("the access log names the key of every request whose key was found, refused or not", async () => {
  const clock = { now: new Date("2026-11-15T12:00:00Z") };
  const store = SqliteStore.open(join(dir, "state.db"), { clock: () => clock.now });
  try {
    await store.setPlan("one-a-second", { maxBatchSize: 10, monthlyUnits: null, rateLimit: 1 });
    await store.setPlan("one-unit", { maxBatchSize: 10, monthlyUnits: 1, rateLimit: null });
    const plain = await store.createKey("plain", "unlimited");
    const slow = await store.createKey("slow", "one-a-second");
    const small = await store.createKey("small", "one-unit");
    const expired = await store.createKey("expired", "unlimited", { ...NO_CONTROLS, expiresAt: "2026-11-01T00:00:00.000Z" });
    const elsewhere = await store.createKey("elsewhere", "unlimited", { ...NO_CONTROLS, allowedCidrs: ["203.0.113.0/24"] });
    const web = await store.createKey("web", "unlimited", { ...NO_CONTROLS, allowedOrigins: ["https://app.example.com"] });
    const rotated = await store.createKey("rotated", "unlimited");
    await store.rotateKey(rotated.key.id, { graceMs: 60_000 });
    const revoked = await store.createKey("revoked", "unlimited");
    await store.revokeKey(revoked.key.id);
    const keys = await KeyCache.load(store);
    const app = createApp({ store, keys, index: defaultIndex, clock: { now: () => clock.now, monotonicMs: () => clock.now.getTime() } });
    const lines: string[] = [];
    const handle = requestHandler(app, { metrics: new Metrics(Metrics.table(PUBLIC_ROUTES, 1)), logger: createLogger("info", (line) => lines.push(line)) });
    const peer = { requestIP: () => ({ address: PEER }) };

    /** Sends a request and returns its status and the key id its access line names. */
    const send = async (secret: string | null, options: { method?: string; path?: string; headers?: Record<string, string>; body?: string } = {}) => {
      const headers: Record<string, string> = { "content-type": "application/json", ...options.headers };
      if (secret !== null) headers.authorization = `Bearer ${secret}`;
      const method = options.method ?? "POST";
      const body = method === "POST" ? (options.body ?? JSON.stringify({ ip: "1.1.1.1" })) : undefined;
      const response = await handle(new Request(`http://iplookup.test${options.path ?? "/v1/lookup"}`, { method, headers, body }), peer);
      await response.arrayBuffer();
      const line = JSON.parse(lines.at(-1)!) as { msg: string; status: number; key_id: string | null };
      expect(line.msg).toBe("request");
      expect(line.status).toBe(response.status);
      return [response.status, line.key_id] as const;
    };

    expect(await send(plain.secret)).toEqual([200, plain.key.id]);
    // Refused once the key is known: its own rate, the body's media type, its quota.
    expect(await send(slow.secret)).toEqual([200, slow.key.id]);
    expect(await send(slow.secret)).toEqual([429, slow.key.id]);
    expect(await send(plain.secret, { headers: { "content-type": "text/plain" } })).toEqual([415, plain.key.id]);
    expect(await send(small.secret)).toEqual([200, small.key.id]);
    expect((await send(small.secret))[1]).toBe(small.key.id);
    expect(await send(plain.secret, { body: "{" })).toEqual([400, plain.key.id]);
    // Refused by the key's own controls, and an old secret past its grace.
    expect(await send(expired.secret)).toEqual([401, expired.key.id]);
    expect(await send(elsewhere.secret)).toEqual([403, elsewhere.key.id]);
    expect(await send(web.secret, { headers: { origin: "https://other.example.com" } })).toEqual([403, web.key.id]);
    expect(await send(rotated.secret)).toEqual([200, rotated.key.id]);
    clock.now = new Date(clock.now.getTime() + 120_000);
    expect(await send(rotated.secret)).toEqual([401, rotated.key.id]);
    // No key known: none sent, an unknown secret, a revoked one; and a route outside /v1.
    expect(await send(null)).toEqual([401, null]);
    expect(await send("ipl_not_a_key_at_all")).toEqual([401, null]);
    expect(await send(revoked.secret)).toEqual([401, null]);
    expect(await send(null, { method: "GET", path: "/healthz" })).toEqual([200, null]);
  } finally {
    await store.close();
  }
});

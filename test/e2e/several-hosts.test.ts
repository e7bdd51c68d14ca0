/**
 * Two servers on one PostgreSQL database, as two hosts behind a load balancer (CONTRACT
 * §9): each `serve --workers 2` in a process of its own, reaching the database through a
 * TCP proxy the test can cut. Keys are made with a store of the test's own, as the CLI
 * or another host would. Skipped when PostgreSQL cannot be reached.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { PostgresStore } from "../../src/store/postgres-store.ts";
import { databaseUrl, postgresAvailable, testStates } from "../support/postgres.ts";
import { startServerProcess, type ServerProcess } from "../support/server-process.ts";
import { startTcpProxy, type TcpProxy } from "../support/tcp-proxy.ts";

const PASSWORD = "never-show-this-pw";
const PERIOD = new Date().toISOString().slice(0, 7);
const states = testStates();

let proxy: TcpProxy;
let store: PostgresStore;
/** The database's URL through the proxy, with a password (trust authentication ignores it). */
let stateUrl: string;
const servers: ServerProcess[] = [];
/** Every line every server wrote, the stopped ones' included. */
const logs: (() => string)[] = [];

async function serve(): Promise<ServerProcess> {
  const server = await startServerProcess(["--state", stateUrl, "--workers", "2", "--log-level", "warn", "--admin-port", "off"]);
  servers.push(server);
  logs.push(() => server.stderr());
  return server;
}

beforeAll(async () => {
  if (!postgresAvailable) return;
  const direct = new URL(await states.freshDatabase());
  store = await PostgresStore.open(direct.href);
  proxy = await startTcpProxy({ hostname: direct.hostname, port: Number(direct.port || 5432) });
  const through = new URL(databaseUrl(direct.pathname.slice(1), { password: PASSWORD }));
  through.port = String(proxy.port);
  stateUrl = through.href;
  await Promise.all([serve(), serve()]);
}, 30_000);

afterAll(async () => {
  await Promise.all(servers.map((server) => server.stop("SIGKILL")));
  proxy?.close();
  await store?.close();
});

function lookup(url: string, secret: string, ips?: string[]): Promise<Response> {
  return fetch(`${url}${ips ? "/v1/lookup/batch" : "/v1/lookup"}`, {
    method: "POST",
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/json", connection: "close" },
    body: JSON.stringify(ips ? { ips } : { ip: "1.1.1.1" }),
  });
}

/** `count` lookups on each server at once, each on a connection of its own (so over both threads). */
async function onBoth(count: number, secret: string, ips?: string[]): Promise<number[]> {
  const [a, b] = servers;
  return Promise.all(
    [a!, b!].flatMap((server) =>
      Array.from({ length: count }, async () => {
        const response = await lookup(server.url, secret, ips);
        await response.arrayBuffer();
        return response.status;
      }),
    ),
  );
}

async function keyOn(plan: string, changes?: { maxBatchSize: number; monthlyUnits: number | null; rateLimit: number | null }) {
  if (changes) await store.setPlan(plan, changes);
  return store.createKey(plan, plan);
}

describe.skipIf(!postgresAvailable)("two servers on one PostgreSQL database", () => {
  test("a new key works at once on both servers, on every thread", async () => {
    for (let round = 0; round < 3; round++) {
      const { secret } = await keyOn("unlimited");
      expect(await onBoth(4, secret)).toEqual(Array(8).fill(200));
    }
  });

  test("revocation and a plan change reach both servers within a second", async () => {
    const revoked = await keyOn("unlimited");
    const moved = await keyOn("unlimited");
    await store.setPlan("one-address", { maxBatchSize: 1, monthlyUnits: null, rateLimit: null });
    const pair = ["1.1.1.1", "8.8.8.8"];
    expect(await onBoth(4, revoked.secret)).toEqual(Array(8).fill(200));
    expect(await onBoth(4, moved.secret, pair)).toEqual(Array(8).fill(200));
    const started = performance.now();
    await store.revokeKey(revoked.key.id);
    await store.setKeyPlan(moved.key.id, "one-address");
    let tookMs = Number.POSITIVE_INFINITY;
    while (performance.now() - started < 2000) {
      const [denied, refused] = await Promise.all([onBoth(4, revoked.secret), onBoth(4, moved.secret, pair)]);
      // A revoked key is an unknown one: 401, or 429 once this address has tried more
      // than ten unknown keys in a second (the throttle of key guessing).
      if (denied.every((status) => status === 401 || status === 429) && refused.every((status) => status === 413)) {
        tookMs = performance.now() - started;
        break;
      }
      await Bun.sleep(50);
    }
    expect(tookMs).toBeLessThan(1000);
    // And for good, once the throttle has refilled.
    await Bun.sleep(1100);
    expect(await onBoth(4, revoked.secret)).toEqual(Array(8).fill(401));
    expect(await onBoth(4, moved.secret, pair)).toEqual(Array(8).fill(413));
  });

  test("a key's controls and its rotation with a grace reach both servers within a second", async () => {
    const { key, secret } = await keyOn("unlimited");
    const codesOnBoth = async (count: number, headers: Record<string, string>, with_ = secret) => {
      const [a, b] = servers;
      return Promise.all(
        [a!, b!].flatMap((server) =>
          Array.from({ length: count }, async () => {
            const response = await fetch(`${server.url}/v1/lookup`, {
              method: "POST",
              headers: { authorization: `Bearer ${with_}`, "content-type": "application/json", connection: "close", ...headers },
              body: '{"ip":"1.1.1.1"}',
            });
            return response.status === 200 ? 200 : ((await response.json()) as { code: string }).code;
          }),
        ),
      );
    };
    /**
     * Resolves to the milliseconds until every answer on both servers is `expected`, then
     * waits out the rest of the second from `started`. The sampled connections may all land
     * on one thread of a server while the other is still within its poll; a second after
     * the change, every thread must have it, so what the test asserts next holds on all.
     */
    const until = async (expected: number | string, headers: Record<string, string>, with_ = secret) => {
      const started = performance.now();
      let tookMs = Number.POSITIVE_INFINITY;
      while (performance.now() - started < 2000) {
        if ((await codesOnBoth(4, headers, with_)).every((code) => code === expected)) {
          tookMs = performance.now() - started;
          break;
        }
        await Bun.sleep(50);
      }
      await Bun.sleep(Math.max(0, 1000 - (performance.now() - started)));
      return tookMs;
    };
    expect(await codesOnBoth(4, {})).toEqual(Array(8).fill(200));
    await store.updateKey(key.id, { allowedCidrs: ["203.0.113.0/24"] });
    expect(await until("address_not_allowed", {})).toBeLessThan(1000);
    await store.updateKey(key.id, { allowedCidrs: null, allowedOrigins: ["https://app.example.com"] });
    expect(await until("origin_not_allowed", { origin: "https://evil.example" })).toBeLessThan(1000);
    expect(await codesOnBoth(4, { origin: "https://app.example.com" })).toEqual(Array(8).fill(200));
    const rotated = (await store.rotateKey(key.id, { graceMs: 3_600_000 }))!;
    expect(await codesOnBoth(4, {}, rotated.secret)).toEqual(Array(8).fill(200));
    await Bun.sleep(1100);
    expect(await codesOnBoth(4, {}, secret)).toEqual(Array(8).fill(200));
    await store.updateKey(key.id, { expiresAt: new Date(Date.now() - 1000).toISOString() });
    expect(await until("key_expired", {}, rotated.secret)).toBeLessThan(1000);
  });

  test("16 clients over both servers never spend more than the quota; what they were answered is what is stored", async () => {
    const limit = 2_000;
    const { key, secret } = await keyOn("race", { maxBatchSize: 100, monthlyUnits: limit, rateLimit: null });
    let answered = 0;
    const statuses = new Map<number, number>();
    const client = async (n: number) => {
      const server = servers[n % 2]!;
      const ips = Array.from({ length: 1 + (n % 4) * 3 }, (_, i) => `8.${n}.${i}.8`);
      for (;;) {
        const response = await fetch(`${server.url}/v1/lookup/batch`, {
          method: "POST",
          headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
          body: JSON.stringify({ ips }),
        });
        const body = (await response.json()) as { code?: string };
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        if (response.status === 200) answered += Number(response.headers.get("x-units-consumed"));
        else {
          expect(response.status).toBe(429);
          expect(body.code).toBe("quota_exceeded");
          // A smaller batch may still fit; once a single address does not, the quota is spent.
          if (ips.length === 1) return;
          ips.pop();
        }
      }
    };
    await Promise.all(Array.from({ length: 16 }, (_, n) => client(n)));
    expect(answered).toBe(limit);
    expect(await store.unitsUsed(key.id, PERIOD)).toBe(limit);
    expect([...statuses.keys()].sort()).toEqual([200, 429]);
  });

  test("a key's rate limit holds across both servers: over any 5 seconds, at most 10% over its rate plus one burst", async () => {
    const rate = 20;
    const { secret } = await keyOn("twenty", { maxBatchSize: 10, monthlyUnits: null, rateLimit: rate });
    const admitted: number[] = [];
    const statuses = new Map<number, number>();
    const until = performance.now() + 6_500;
    // Eight clients, four on each server, each asking far more often than the rate allows.
    await Promise.all(
      Array.from({ length: 8 }, async (_, n) => {
        const server = servers[n % 2]!;
        while (performance.now() < until) {
          const response = await fetch(`${server.url}/v1/lookup`, {
            method: "POST",
            headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
            body: JSON.stringify({ ip: "1.1.1.1" }),
          });
          await response.arrayBuffer();
          statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
          if (response.status === 200) admitted.push(performance.now());
          else expect(response.headers.get("retry-after")).toMatch(/^[1-9]\d*$/);
          await Bun.sleep(4);
        }
      }),
    );
    admitted.sort((a, b) => a - b);
    let worst = 0;
    for (let start = 0, end = 0; end < admitted.length; end++) {
      while (admitted[end]! - admitted[start]! > 5000) start++;
      worst = Math.max(worst, end - start + 1);
    }
    console.log(`rate limit across two servers: at most ${worst} requests in a 5 s window at ${rate}/s (${(worst / rate).toFixed(2)} × the rate; the bound is 6.5 ×)`);
    expect([...statuses.keys()].sort()).toEqual([200, 429]);
    expect(worst).toBeLessThanOrEqual(rate * 5 * 1.1 + rate);
    // The key still gets most of its rate: slices left to expire unspent cost it little.
    expect(worst).toBeGreaterThanOrEqual(rate * 5 * 0.8);
  }, 20_000);

  test("the database cut and restored mid-run: 503 store_unavailable with Retry-After, /readyz 503, /healthz 200, nothing charged, recovery by itself", async () => {
    const { key, secret } = await keyOn("unlimited");
    const seen: { phase: string; status: number; code?: string; retryAfter: string | null }[] = [];
    let phase = "before";
    let answered = 0;
    let running = true;
    let slowestMs = 0;
    const client = async (n: number) => {
      const server = servers[n % 2]!;
      while (running) {
        const started = performance.now();
        const response = await lookup(server.url, secret);
        const body = (await response.json()) as { code?: string };
        slowestMs = Math.max(slowestMs, performance.now() - started);
        seen.push({ phase, status: response.status, code: body.code, retryAfter: response.headers.get("retry-after") });
        if (response.status === 200) answered += Number(response.headers.get("x-units-consumed"));
        await Bun.sleep(10);
      }
    };
    const probe = async (path: string) => Promise.all(servers.slice(0, 2).map(async (server) => (await fetch(`${server.url}${path}`, { headers: { connection: "close" } })).status));
    const clients = Array.from({ length: 6 }, (_, n) => client(n));
    await Bun.sleep(500);
    proxy.cut();
    phase = "cutting";
    // Both servers soon know: /readyz says so, /healthz does not care.
    const cutAt = performance.now();
    // A server answers as one, whichever of its threads takes the connection (each has
    // its own poll, which may not have come round yet): each round asks each server on
    // four connections at once, and once a round has had a 503 from a server, every later
    // round must have only 503s from it.
    const saidUnready = [false, false];
    const readyAfterNotice: number[] = [];
    const probeRound = async () => {
      const rounds = await Promise.all(Array.from({ length: 4 }, () => probe("/readyz")));
      const byServer = [0, 1].map((s) => rounds.map((statuses) => statuses[s]!));
      byServer.forEach((statuses, s) => {
        if (saidUnready[s]) readyAfterNotice.push(...statuses);
      });
      byServer.forEach((statuses, s) => {
        if (statuses.includes(503)) saidUnready[s] = true;
      });
      return byServer.flat();
    };
    while (performance.now() - cutAt < 3000 && (await probeRound()).some((status) => status !== 503)) await Bun.sleep(50);
    const noticedMs = performance.now() - cutAt;
    await probeRound();
    phase = "cut";
    await Bun.sleep(1000);
    const ready = await Promise.all(
      servers.slice(0, 2).map(async (server) => {
        const response = await fetch(`${server.url}/readyz`);
        return { status: response.status, body: await response.json() };
      }),
    );
    expect(await probe("/healthz")).toEqual([200, 200]);
    proxy.restore();
    phase = "restoring";
    const restoredAt = performance.now();
    while (performance.now() - restoredAt < 5000 && (await probe("/readyz")).some((status) => status !== 200)) await Bun.sleep(50);
    const recoveredMs = performance.now() - restoredAt;
    phase = "after";
    await Bun.sleep(700);
    running = false;
    await Promise.all(clients);

    console.log(`database cut: /readyz 503 on both after ${noticedMs.toFixed(0)} ms; back: /readyz 200 on both after ${recoveredMs.toFixed(0)} ms; slowest answer ${slowestMs.toFixed(0)} ms`);
    // A cut is noticed when the key poll's read gives up (the store's read time, 2 s).
    expect(noticedMs).toBeLessThan(3000);
    expect(recoveredMs).toBeLessThan(3000);
    expect(readyAfterNotice.length).toBeGreaterThanOrEqual(8);
    expect(readyAfterNotice).toEqual(Array(readyAfterNotice.length).fill(503));
    for (const { status, body } of ready) {
      expect(status).toBe(503);
      expect(body).toEqual({ status: "unavailable", reason: "the state store cannot be reached" });
    }
    // Never anything but an answer or store_unavailable with Retry-After: no 500, no wait without bound.
    for (const answer of seen) {
      if (answer.status === 200) continue;
      expect(answer).toMatchObject({ status: 503, code: "store_unavailable", retryAfter: expect.stringMatching(/^[1-9]\d*$/) });
    }
    expect(slowestMs).toBeLessThan(3000);
    const during = seen.filter((answer) => answer.phase === "cut");
    expect(during.length).toBeGreaterThan(20);
    expect(during.every((answer) => answer.status === 503)).toBe(true);
    for (const name of ["before", "after"]) expect(seen.filter((answer) => answer.phase === name && answer.status === 200).length).toBeGreaterThan(10);
    // Every answered unit is stored; only a charge whose commit was on its way at the
    // moment of the cut (one a client at most) may be stored and yet answered 503.
    const stored = await store.unitsUsed(key.id, PERIOD);
    console.log(`database cut: ${answered} units answered, ${stored} stored`);
    expect(stored).toBeGreaterThanOrEqual(answered);
    expect(stored).toBeLessThanOrEqual(answered + 6);
  }, 20_000);

  test("kill -9 of one server under load: answered ≤ stored ≤ sent, and the other serves on", async () => {
    const { key, secret } = await keyOn("unlimited");
    let sent = 0;
    let answered = 0;
    let killed = false;
    const [victim, survivor] = [servers[0]!, servers[1]!];
    const afterKill = { survivor: 0 };
    const client = async (n: number) => {
      const server = n % 2 === 0 ? victim : survivor;
      const ips = Array.from({ length: 1 + (n % 5) * 5 }, (_, i) => `9.${n}.${i}.9`);
      for (let i = 0; ; i++) {
        if (killed && (server === victim || afterKill.survivor > 200)) return;
        sent += ips.length;
        try {
          const response = await lookup(server.url, secret, ips);
          await response.arrayBuffer();
          expect(response.status).toBe(200);
          answered += ips.length;
          if (killed && server === survivor) afterKill.survivor++;
        } catch {
          expect(server).toBe(victim); // only the killed server's connections fail
          return;
        }
      }
    };
    const clients = Array.from({ length: 16 }, (_, n) => client(n));
    await Bun.sleep(400 + Math.floor(Math.random() * 400));
    victim.process.kill("SIGKILL");
    await victim.process.exited;
    killed = true;
    await Promise.all(clients);
    expect(afterKill.survivor).toBeGreaterThan(200);
    const stored = await store.unitsUsed(key.id, PERIOD);
    expect(answered).toBeGreaterThan(0);
    expect(stored).toBeGreaterThanOrEqual(answered);
    expect(stored).toBeLessThanOrEqual(sent);
  });

  test("no server ever wrote the database's password, nor shows it in /metrics", async () => {
    const text = logs.map((log) => log()).join("\n");
    expect(text).toContain("postgres://postgres:***@");
    expect(text).toContain("the state store cannot be reached");
    expect(text).not.toContain(PASSWORD);
    const metrics = await (await fetch(`${servers[1]!.url}/metrics`)).text();
    expect(metrics).toContain("iplookup_http_requests_total");
    expect(metrics).not.toContain(PASSWORD);
  });
});

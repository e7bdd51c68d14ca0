/**
 * `serve --workers 2` over real sockets: however many threads serve, iplookup answers as
 * one server (CONTRACT §8). Requests go out on many connections at once, which the
 * kernel spreads over both threads' listeners.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultDataPath } from "../../src/config/paths.ts";
import { buildDataSet } from "../../src/importer/build.ts";
import { writeDataFile } from "../../src/importer/data-file.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { heavyTurn } from "../support/heavy-turn.ts";
import { cli, startServerProcess, type ServerProcess } from "../support/server-process.ts";
import { writeSmallSources } from "../support/small-dataset.ts";

const MAIN = join(import.meta.dir, "..", "..", "src", "main.ts");
const dir = mkdtempSync(join(tmpdir(), "iplookup-workers-"));
const servers: ServerProcess[] = [];
// Several two-thread servers at once take about 0.75 GB: a turn with the suite's other heavy files (see heavyTurn).
let endTurn = () => {};
beforeAll(async () => {
  endTurn = await heavyTurn();
}, 120_000);
afterAll(async () => {
  await Promise.all(servers.map((server) => server.stop("SIGKILL")));
  rmSync(dir, { recursive: true, force: true });
  endTurn();
});

async function serve(name: string, args: string[] = [], env: Record<string, string> = {}) {
  const state = join(dir, `${name}.db`);
  const server = await startServerProcess(["--state", state, "--workers", "2", "--log-level", "warn", ...args], { env });
  servers.push(server);
  return { server, state };
}

async function keyOn(state: string, plan: string) {
  const store = SqliteStore.open(state);
  if (plan === "five") await store.setPlan("five", { maxBatchSize: 100, monthlyUnits: null, rateLimit: 5 });
  const issued = await store.createKey("w", plan);
  await store.close();
  return issued;
}

/** `count` requests at once, each on a connection of its own. */
function burst(count: number, request: () => Promise<Response>): Promise<number[]> {
  return Promise.all(Array.from({ length: count }, async () => (await request()).status));
}

function lookup(url: string, secret: string, ip = "1.1.1.1") {
  return fetch(`${url}/v1/lookup`, {
    method: "POST",
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/json", connection: "close" },
    body: JSON.stringify({ ip }),
  });
}

describe("two workers answer as one server", () => {
  test("a key's rate limit holds for the whole server, across connections and threads", async () => {
    const { server, state } = await serve("rate");
    const { secret } = await keyOn(state, "five");
    const began = performance.now();
    const statuses = await burst(40, () => lookup(server.url, secret));
    const seconds = (performance.now() - began) / 1000;
    const ok = statuses.filter((status) => status === 200).length;
    // The burst (5) and what refills meanwhile at 5 a second; one bucket per thread would let ~10 through.
    expect(ok).toBeGreaterThanOrEqual(5);
    expect(ok).toBeLessThanOrEqual(5 + Math.ceil(seconds * 5));
    expect(statuses.filter((status) => status === 429)).toHaveLength(40 - ok);
  });

  test("unknown keys stay throttled per peer address for the whole server", async () => {
    const { server } = await serve("failed");
    const statuses = await burst(40, () => lookup(server.url, "ipl_not_a_key"));
    const unauthorized = statuses.filter((status) => status === 401).length;
    expect(unauthorized).toBeGreaterThanOrEqual(10);
    expect(unauthorized).toBeLessThanOrEqual(12);
    expect(statuses.filter((status) => status === 429)).toHaveLength(40 - unauthorized);
  });

  test("/metrics shows the whole server's counters on every scrape", async () => {
    const { server, state } = await serve("metrics");
    const { secret } = await keyOn(state, "unlimited");
    const statuses = await burst(100, () => lookup(server.url, secret));
    expect(statuses.every((status) => status === 200)).toBe(true);
    const scrapes = await Promise.all(
      Array.from({ length: 8 }, async () => {
        const response = await fetch(`${server.url}/metrics`, { headers: { connection: "close" } });
        return response.text();
      }),
    );
    for (const text of scrapes) {
      expect(text).toContain("iplookup_addresses_looked_up_total 100");
      expect(text).toContain("iplookup_units_consumed_total 100");
      expect(text).toContain('iplookup_http_requests_total{route="/v1/lookup",method="POST",status="200"} 100');
    }
  });

  test("a key created with the CLI works on the very next request, on every thread", async () => {
    const { server, state } = await serve("fresh");
    for (let round = 0; round < 3; round++) {
      const created = cli(["keys", "create", "--name", `fresh-${round}`, "--json", "--state", state]);
      expect(created.code).toBe(0);
      const { key } = JSON.parse(created.stdout) as { key: string };
      const statuses = await burst(8, () => lookup(server.url, key));
      expect(statuses).toEqual(Array(8).fill(200));
    }
  });

  test("revocation and plan changes reach every thread within a second", async () => {
    const { server, state } = await serve("changes");
    const a = await keyOn(state, "unlimited");
    const b = await keyOn(state, "unlimited");
    expect(await burst(10, () => lookup(server.url, a.secret))).toEqual(Array(10).fill(200));
    const store = SqliteStore.open(state);
    await store.revokeKey(a.key.id);
    await store.setPlan("unlimited", { maxBatchSize: 1 });
    await store.close();
    await Bun.sleep(1000);
    expect(await burst(10, () => lookup(server.url, a.secret))).toEqual(Array(10).fill(401));
    const batches = await burst(10, () =>
      fetch(`${server.url}/v1/lookup/batch`, {
        method: "POST",
        headers: { authorization: `Bearer ${b.secret}`, "content-type": "application/json", connection: "close" },
        body: JSON.stringify({ ips: ["1.1.1.1", "8.8.8.8"] }),
      }),
    );
    expect(batches).toEqual(Array(10).fill(413));
  });

  test("a key's controls (address, origin, expiry) and its rotation with a grace reach every thread within a second", async () => {
    const { server, state } = await serve("controls");
    const { key, secret } = await keyOn(state, "unlimited");
    const send = (headers: Record<string, string> = {}, with_ = secret) =>
      fetch(`${server.url}/v1/lookup`, { method: "POST", headers: { authorization: `Bearer ${with_}`, "content-type": "application/json", connection: "close", ...headers }, body: '{"ip":"1.1.1.1"}' });
    const codes = async (count: number, headers?: Record<string, string>, with_?: string) =>
      Promise.all(Array.from({ length: count }, async () => {
        const response = await send(headers, with_);
        return response.status === 200 ? 200 : `${response.status} ${((await response.json()) as { code: string }).code}`;
      }));
    const change = async (work: (store: SqliteStore) => Promise<unknown>) => {
      const store = SqliteStore.open(state);
      await work(store);
      await store.close();
      await Bun.sleep(1000);
    };
    expect(await codes(10)).toEqual(Array(10).fill(200));
    // The test's requests come from 127.0.0.1.
    await change((store) => store.updateKey(key.id, { allowedCidrs: ["203.0.113.0/24"] }));
    expect(await codes(10)).toEqual(Array(10).fill("403 address_not_allowed"));
    await change((store) => store.updateKey(key.id, { allowedCidrs: ["127.0.0.0/8"], allowedOrigins: ["https://app.example.com"] }));
    expect(await codes(10, { origin: "https://evil.example" })).toEqual(Array(10).fill("403 origin_not_allowed"));
    const allowed = await Promise.all(Array.from({ length: 10 }, async () => (await send({ origin: "https://app.example.com" })).headers.get("access-control-allow-origin")));
    expect(allowed).toEqual(Array(10).fill("https://app.example.com"));
    // Rotation with a grace: the new secret at once, the old one still, on every thread.
    const store = SqliteStore.open(state);
    const rotated = (await store.rotateKey(key.id, { graceMs: 3_600_000 }))!;
    await store.close();
    expect(await codes(10, {}, rotated.secret)).toEqual(Array(10).fill(200));
    await Bun.sleep(1000);
    expect(await codes(10, {}, secret)).toEqual(Array(10).fill(200));
    // Expired a moment ago.
    await change((store) => store.updateKey(key.id, { expiresAt: new Date(Date.now() - 1000).toISOString() }));
    expect(await codes(10, {}, rotated.secret)).toEqual(Array(10).fill("401 key_expired"));
  });

  test("a reload swaps the data in every thread", async () => {
    const data = join(dir, "reload-data.db");
    copyFileSync(defaultDataPath(), data);
    mkdirSync(join(dir, "small"));
    const small = join(dir, "small", "data.db");
    writeDataFile(small, await buildDataSet(writeSmallSources(join(dir, "small")), new Date("2026-01-01T00:00:00Z")));
    const { server, state } = await serve("reload", ["--data", data, "--log-level", "info"]);
    const { secret } = await keyOn(state, "unlimited");
    const asns = async () =>
      Promise.all(Array.from({ length: 16 }, async () => ((await (await lookup(server.url, secret, "1.0.0.130")).json()) as { asn: number }).asn));
    expect(new Set(await asns())).toEqual(new Set([13335]));
    copyFileSync(small, `${data}.new`);
    renameSync(`${data}.new`, data);
    const deadline = Date.now() + 5000;
    while (!server.stderr().includes('"msg":"data reloaded"') && Date.now() < deadline) await Bun.sleep(50);
    // In the small data set 1.0.0.128/28 is AS64500; every thread answers from it.
    expect(new Set(await asns())).toEqual(new Set([64500]));
    expect(server.stderr().match(/"msg":"data reloaded"/g)).toHaveLength(1);
  });

  test("SIGTERM with nothing in flight exits 0 within half a second", async () => {
    const { server } = await serve("stop");
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    const began = performance.now();
    expect(await server.stop("SIGTERM")).toBe(0);
    expect(performance.now() - began).toBeLessThan(500);
  });
});

describe("the port", () => {
  test("a second iplookup on the same port says so and exits 1 within two seconds; the first keeps the port", async () => {
    const { server, state } = await serve("first");
    const { secret } = await keyOn(state, "unlimited");
    const port = new URL(server.url).port;
    const began = performance.now();
    // --admin-port off: Bun.spawn without env does not pass on the preload's IPLOOKUP_ADMIN_PORT.
    const second = Bun.spawn([process.execPath, MAIN, "serve", "--host", "127.0.0.1", "--port", port, "--workers", "2", "--admin-port", "off", "--state", join(dir, "second.db")], {
      stdout: "pipe",
      stderr: "pipe",
    });
    const timer = setTimeout(() => second.kill("SIGKILL"), 5000);
    const code = await second.exited;
    clearTimeout(timer);
    expect(code).toBe(1);
    expect(performance.now() - began).toBeLessThan(2000);
    const stderr = await new Response(second.stderr).text();
    expect(stderr).toContain(`127.0.0.1:${port}`);
    expect(stderr).toContain("in use");
    expect(stderr.trim().split("\n")).toHaveLength(1);
    // Every request still reaches the first server and its keys.
    expect(await burst(20, () => lookup(server.url, secret))).toEqual(Array(20).fill(200));
  });

  test("a port held by another program: one message, exit 1, no restarts", async () => {
    const holder = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    try {
      for (const workers of ["1", "2"]) {
        const result = cli(["serve", "--host", "127.0.0.1", "--port", String(holder.port), "--workers", workers, "--state", join(dir, "held.db")]);
        expect(result.code).toBe(1);
        expect(result.stderr.trim().split("\n")).toEqual([
          `iplookup: cannot listen on 127.0.0.1:${holder.port}: the port is in use by another program (or another iplookup); stop it or choose another --port`,
        ]);
      }
    } finally {
      holder.stop(true);
    }
  });
});

test("by default the server listens on IPv4 and IPv6", async () => {
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  // --admin-port off: Bun.spawn without env does not pass on the preload's IPLOOKUP_ADMIN_PORT.
  const child = Bun.spawn([process.execPath, MAIN, "serve", "--port", String(port), "--workers", "2", "--admin-port", "off", "--state", join(dir, "dual.db")], { stdout: "pipe", stderr: "pipe" });
  try {
    let answered: number[] = [];
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      answered = await Promise.all(
        [`http://127.0.0.1:${port}/healthz`, `http://[::1]:${port}/healthz`].map((url) => fetch(url).then((r) => r.status, () => 0)),
      );
      if (answered.every((status) => status === 200)) break;
      await Bun.sleep(100);
    }
    expect(answered).toEqual([200, 200]);
  } finally {
    child.kill("SIGTERM");
    expect(await child.exited).toBe(0);
  }
});

test("the README's quick start, run as a script against a server with two workers, answers at once", async () => {
  const readme = readFileSync(join(import.meta.dir, "..", "..", "README.md"), "utf8");
  const quickStart = readme.slice(readme.indexOf("## Quick start"), readme.indexOf("## The API"));
  const script = [...quickStart.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1] as string).find((block) => block.includes("keys create"));
  expect(script).toBeDefined();
  const home = join(dir, "home");
  mkdirSync(home);
  const env = { XDG_STATE_HOME: join(home, "state") };
  // No --state: the server and the script's CLI both use the default state file.
  const quick = await startServerProcess(["--workers", "2", "--log-level", "warn"], { env });
  servers.push(quick);
  const port = new URL(quick.url).port;
  for (let run = 0; run < 5; run++) {
    const result = Bun.spawnSync(["bash", "-c", (script as string).replaceAll("localhost:8080", `localhost:${port}`)], {
      cwd: join(import.meta.dir, "..", ".."),
      env: { ...process.env, ...env },
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout.toString())).toMatchObject({ ip: "1.1.1.1", found: true, asn: 13335 });
  }
});

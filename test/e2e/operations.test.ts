import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultDataPath } from "../../src/config/paths.ts";
import { buildDataSet } from "../../src/importer/build.ts";
import { writeDataFile } from "../../src/importer/data-file.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { startServerProcess, type ServerProcess } from "../support/server-process.ts";
import { writeSmallSources } from "../support/small-dataset.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-ops-"));
const servers: ServerProcess[] = [];
afterAll(async () => {
  await Promise.all(servers.map((server) => server.stop("SIGKILL")));
  rmSync(dir, { recursive: true, force: true });
});

let smallData: string;
beforeAll(async () => {
  mkdirSync(join(dir, "small"));
  smallData = join(dir, "small", "data.db");
  writeDataFile(smallData, await buildDataSet(writeSmallSources(join(dir, "small")), new Date("2026-01-01T00:00:00Z")));
});

async function keyed(state: string, plan = "unlimited") {
  const store = SqliteStore.open(state);
  if (plan === "tiny") await store.setPlan("tiny", { maxBatchSize: 100, monthlyUnits: 1000, rateLimit: null });
  const issued = await store.createKey("ops", plan);
  await store.close();
  return issued;
}

function post(url: string, secret: string, body: unknown) {
  return fetch(`${url}/v1/lookup/batch`, {
    method: "POST",
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

describe("operating the server", () => {
  test("metrics, OpenAPI and a JSON access log that never holds a secret", async () => {
    const state = join(dir, "metrics.db");
    const { key, secret } = await keyed(state);
    const server = await startServerProcess(["--state", state, "--log-level", "info"]);
    servers.push(server);
    expect((await post(server.url, secret, { ips: ["1.1.1.1", "8.8.8.8"] })).status).toBe(200);
    expect((await post(server.url, secret, { ips: ["10.0.0.1"] })).status).toBe(400);
    expect((await fetch(`${server.url}/v1/me`, { headers: { authorization: "Bearer ipl_wrong" } })).status).toBe(401);

    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toContain('iplookup_http_requests_total{route="/v1/lookup/batch",method="POST",status="200"} 1');
    expect(metrics).toContain('iplookup_http_requests_total{route="/v1/lookup/batch",method="POST",status="400"} 1');
    expect(metrics).toContain('iplookup_http_requests_total{route="/v1/me",method="GET",status="401"} 1');
    expect(metrics).toContain("iplookup_addresses_looked_up_total 2");
    expect(metrics).toContain("iplookup_units_consumed_total 2");
    expect(metrics).toMatch(/iplookup_http_request_duration_seconds_count\{route="\/v1\/lookup\/batch"\} 2/);
    expect(metrics).toMatch(/iplookup_data_age_seconds \d+/);
    expect(metrics).toMatch(/iplookup_build_info\{version="[^"]+",data_version="\d{8}T\d{6}Z-[0-9a-f]{8}",data_sources="@ip-location-db\/asn@2\.3\.2026061719 [^"]+"\} 1/);
    expect(metrics).not.toContain(key.id);

    const openapi = (await (await fetch(`${server.url}/openapi.json`)).json()) as { openapi: string; paths: Record<string, unknown>; components: { schemas: Record<string, any> } };
    expect(openapi.openapi).toBe("3.1.0");
    expect(Object.keys(openapi.paths)).toEqual(expect.arrayContaining(["/v1/lookup", "/v1/lookup/batch", "/v1/me", "/v1/usage"]));
    expect(openapi.components.schemas.BatchRequest.properties.ips.minItems).toBe(1);
    const docs = await fetch(`${server.url}/docs`);
    expect(docs.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const html = await docs.text();
    expect(html).toContain("POST /v1/lookup/batch");
    expect(html).not.toMatch(/<script|https?:\/\//);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    const head = await fetch(`${server.url}/healthz`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("x-request-id")).toBeTruthy();
    // Dated like every other answer (RFC 9110 asks an origin server with a clock to date them).
    const getDate = Date.parse((await fetch(`${server.url}/healthz`)).headers.get("date") ?? "");
    expect(Math.abs(Date.parse(head.headers.get("date") ?? "") - getDate)).toBeLessThanOrEqual(2000);
    expect(await head.text()).toBe("");

    await server.stop("SIGTERM");
    const lines = server
      .stderr()
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const access = lines.filter((line) => line.msg === "request");
    expect(access.length).toBeGreaterThanOrEqual(7);
    expect(access[0]).toMatchObject({ level: "info", method: "POST", route: "/v1/lookup/batch", status: 200, key_id: key.id, units: 2, peer: "127.0.0.1" });
    expect(typeof access[0]!.request_id).toBe("string");
    expect(typeof access[0]!.duration_ms).toBe("number");
    expect(access[2]).toMatchObject({ route: "/v1/me", status: 401, key_id: null, units: 0 });
    expect(server.stderr()).not.toContain(secret);
    expect(server.stderr()).not.toContain("ipl_wrong");
  });

  test("replacing the data file or SIGHUP swaps the index under load with no failed request; a broken file keeps the old one", async () => {
    const state = join(dir, "reload.db");
    const data = join(dir, "reload-data.db");
    copyFileSync(defaultDataPath(), data);
    const { secret } = await keyed(state);
    const server = await startServerProcess(["--state", state, "--data", data, "--log-level", "info"]);
    servers.push(server);
    const reloads = () => (server.stderr().match(/"msg":"data reloaded"/g) ?? []).length;
    const asnOf = async () => ((await (await post(server.url, secret, { ips: ["1.0.0.130"] })).json()) as { results: Array<{ asn: number | null }> }).results[0]!.asn;
    expect(await asnOf()).toBe(13335);

    let failures = 0;
    let answered = 0;
    let stop = false;
    const load = async () => {
      while (!stop) {
        const response = await post(server.url, secret, { ips: ["1.1.1.1", "1.0.0.130", "2606:4700:4700::1111"] });
        if (response.status !== 200) failures++;
        else {
          const { results } = (await response.json()) as { results: unknown[] };
          if (results.length !== 3) failures++;
          answered++;
        }
      }
    };
    const loaders = Array.from({ length: 8 }, load);
    const replace = (from: string) => {
      copyFileSync(from, `${data}.new`);
      renameSync(`${data}.new`, data);
    };
    try {
      await Bun.sleep(300);
      replace(smallData); // in the small data set, 1.0.0.128/28 is AS64500
      const deadline = Date.now() + 5000;
      while ((await asnOf()) !== 64500 && Date.now() < deadline) await Bun.sleep(100);
      expect(await asnOf()).toBe(64500);

      writeFileSync(`${data}.new`, "this is not a data file");
      renameSync(`${data}.new`, data);
      await Bun.sleep(2500);
      expect(await asnOf()).toBe(64500);
      expect(server.stderr()).toContain("data reload failed; still serving the data loaded before");

      copyFileSync(defaultDataPath(), `${data}.new`);
      renameSync(`${data}.new`, data);
      server.process.kill("SIGHUP");
      const back = Date.now() + 5000;
      while ((await asnOf()) !== 13335 && Date.now() < back) await Bun.sleep(100);
      expect(await asnOf()).toBe(13335);

      // SIGHUP reloads even when the file did not change.
      await Bun.sleep(1500);
      const before = reloads();
      server.process.kill("SIGHUP");
      const hup = Date.now() + 3000;
      while (reloads() === before && Date.now() < hup) await Bun.sleep(50);
      expect(reloads()).toBe(before + 1);
    } finally {
      stop = true;
      await Promise.all(loaders);
    }
    expect(answered).toBeGreaterThan(50);
    expect(failures).toBe(0);
    expect(await server.stop("SIGTERM")).toBe(0);
  }, 30_000);

  test("two workers share one quota without overspending it, and stop cleanly on a repeated Ctrl-C", async () => {
    const state = join(dir, "workers.db");
    const { key, secret } = await keyed(state, "tiny");
    const server = await startServerProcess(["--state", state, "--workers", "2", "--log-level", "info"]);
    servers.push(server);
    // One server: one start-up line, naming its workers.
    expect(server.stderr().match(/"iplookup serving"/g)).toHaveLength(1);
    expect(server.stderr()).toContain('"workers":2');

    const ips = Array.from({ length: 37 }, (_, i) => `9.9.${i}.9`);
    const responses = await Promise.all(Array.from({ length: 60 }, () => post(server.url, secret, { ips })));
    const ok = responses.filter((response) => response.status === 200).length;
    expect(ok).toBe(Math.floor(1000 / 37));
    expect(responses.filter((response) => response.status === 429)).toHaveLength(60 - ok);
    // A terminal's Ctrl-C can arrive twice: the second must not cut the stop short.
    server.process.kill("SIGINT");
    expect(await server.stop("SIGINT")).toBe(0);

    const store = SqliteStore.open(state);
    expect(await store.unitsUsed(key.id, new Date().toISOString().slice(0, 7))).toBe(ok * 37);
    await store.close();
  }, 30_000);

  test("SIGTERM finishes the requests in flight, commits their units and exits 0", async () => {
    const state = join(dir, "graceful.db");
    const { key, secret } = await keyed(state);
    const server = await startServerProcess(["--state", state, "--log-level", "warn"]);
    servers.push(server);
    await Bun.sleep(600);
    const body = JSON.stringify({ ips: Array.from({ length: 50 }, (_, i) => `8.8.${i}.8`) });
    const half = body.length >> 1;
    const slow = (delayMs: number) =>
      fetch(`${server.url}/v1/lookup/batch`, {
        method: "POST",
        headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
        body: new ReadableStream({
          async start(controller) {
            controller.enqueue(new TextEncoder().encode(body.slice(0, half)));
            await Bun.sleep(delayMs);
            controller.enqueue(new TextEncoder().encode(body.slice(half)));
            controller.close();
          },
        }),
      });
    const inFlight = [slow(600), slow(900), slow(1200)];
    await Bun.sleep(300);
    server.process.kill("SIGTERM");
    const responses = await Promise.all(inFlight);
    expect(responses.map((response) => response.status)).toEqual([200, 200, 200]);
    expect(await server.process.exited).toBe(0);
    const store = SqliteStore.open(state);
    expect(await store.unitsUsed(key.id, new Date().toISOString().slice(0, 7))).toBe(150);
    await store.close();
  }, 30_000);
});

/**
 * A client that has closed its connection, in-process through the server's own request
 * handler: the socket then has no peer (Bun's requestIP answers null for a closed
 * request), often before the request's signal is aborted. Such a request is recorded as
 * gone (499, CONTRACT §13), never as a server failure, and costs nothing: no unit, no
 * key looked up in the store. On each store kind.
 */
import { afterAll, describe, expect, spyOn, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KeyCache } from "../../src/access/key-cache.ts";
import { createApp } from "../../src/http/app.ts";
import { PUBLIC_ROUTES } from "../../src/http/routes.ts";
import { requestHandler, type PeerSource } from "../../src/http/server.ts";
import { createLogger, type LogLevel } from "../../src/log/logger.ts";
import { Metrics } from "../../src/metrics/metrics.ts";
import { openStore } from "../../src/store/open-store.ts";
import type { KeyControls } from "../../src/store/store.ts";
import { defaultIndex } from "../support/default-data.ts";
import { postgresAvailable, testStates } from "../support/postgres.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-gone-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const pg = testStates();

const PEER = { address: "198.51.100.7" };
/** A socket whose client had closed before the request was handled. */
const closed: PeerSource = { requestIP: () => null };
/**
 * A socket whose client was there when its request came, when the access log (at level
 * info) asks for the peer, and had gone by the time it is asked again.
 */
const closing = (): PeerSource => {
  let asked = 0;
  return { requestIP: () => (asked++ === 0 ? PEER : null) };
};
const CONTROLS: KeyControls = { expiresAt: null, allowedCidrs: ["198.51.100.0/24"], allowedOrigins: null, metadata: null };

async function setUp(location: string, level: LogLevel) {
  const clock = { now: new Date("2026-11-15T12:00:00Z") };
  const store = await openStore(location, { clock: () => clock.now });
  const plain = await store.createKey("plain", "unlimited");
  const office = await store.createKey("office", "unlimited", CONTROLS);
  const keys = await KeyCache.load(store);
  const app = createApp({ store, keys, index: defaultIndex, clock: { now: () => clock.now, monotonicMs: () => clock.now.getTime() } });
  const metrics = new Metrics(Metrics.table(PUBLIC_ROUTES, 1));
  const lines: string[] = [];
  const handle = requestHandler(app, { metrics, logger: createLogger(level, (line) => lines.push(line)) });
  const send = async (method: string, path: string, secret: string, socket: PeerSource, body?: unknown) => {
    const headers: Record<string, string> = { authorization: `Bearer ${secret}` };
    if (body !== undefined) headers["content-type"] = "application/json";
    const response = await handle(new Request(`http://iplookup.test${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) }), socket);
    await response.arrayBuffer();
    return response.status;
  };
  const counted = (route: string, method: string, status: number) =>
    Number(new RegExp(`^iplookup_http_requests_total\\{route="${route}",method="${method}",status="${status}"\\} (\\d+)$`, "m").exec(metrics.render({ now: clock.now, dataBuiltAt: "", dataVersion: "t", dataSourceVersions: "", dataSources: [], version: "t" }))?.[1] ?? 0);
  const errors = () => lines.filter((line) => line.includes('"level":"error"'));
  const used = (keyId: string) => store.unitsUsed(keyId, "2026-11");
  return { store, plain, office, send, counted, errors, lines, used, close: () => store.close() };
}

function suite(fresh: () => Promise<string>) {
  for (const level of ["info", "warn"] as const) {
    test(`GET /v1/me from a client that has gone: 499, not 500, and no error logged (log level ${level})`, async () => {
      const t = await setUp(await fresh(), level);
      try {
        expect(await t.send("GET", "/v1/me", t.plain.secret, closed)).toBe(499);
        expect(await t.send("GET", "/v1/me", t.plain.secret, { requestIP: () => PEER })).toBe(200);
        expect([t.counted("/v1/me", "GET", 499), t.counted("/v1/me", "GET", 500)]).toEqual([1, 0]);
        expect(t.errors()).toEqual([]);
      } finally {
        await t.close();
      }
    });
  }

  test("unknown keys from a client that has gone: 499, and the store is not asked for them", async () => {
    const t = await setUp(await fresh(), "info");
    try {
      const lookups = spyOn(t.store, "findActiveKey");
      // More than the throttle of unknown keys lets through, which a gone client skips.
      for (let n = 0; n < 20; n++) expect(await t.send("GET", "/v1/usage", `ipl_${"x".repeat(20)}${n}`, closed)).toBe(499);
      expect(lookups).toHaveBeenCalledTimes(0);
      expect(await t.send("GET", "/v1/usage", `ipl_${"y".repeat(20)}`, { requestIP: () => PEER })).toBe(401);
      expect(lookups).toHaveBeenCalledTimes(1);
      expect(t.errors()).toEqual([]);
    } finally {
      await t.close();
    }
  });

  test("a key with allowed_cidrs, from a client that has gone: 499, not 403", async () => {
    const t = await setUp(await fresh(), "warn");
    try {
      expect(await t.send("POST", "/v1/lookup", t.office.secret, closed, { ip: "1.1.1.1" })).toBe(499);
      expect(await t.send("POST", "/v1/lookup", t.office.secret, { requestIP: () => PEER }, { ip: "1.1.1.1" })).toBe(200);
      expect(await t.used(t.office.key.id)).toBe(1);
    } finally {
      await t.close();
    }
  });

  for (const level of ["info", "warn"] as const) {
    test(`a batch whose client closed after sending it, the request's signal not yet aborted: 499, nothing charged (log level ${level})`, async () => {
      const t = await setUp(await fresh(), level);
      try {
        const ips = Array.from({ length: 100 }, (_, i) => `1.1.${i}.1`);
        const sockets = level === "info" ? [closing(), closed] : [closed];
        for (const socket of sockets) expect(await t.send("POST", "/v1/lookup/batch", t.plain.secret, socket, { ips })).toBe(499);
        expect(await t.used(t.plain.key.id)).toBe(0);
        expect(await t.send("POST", "/v1/lookup/batch", t.plain.secret, { requestIP: () => PEER }, { ips })).toBe(200);
        expect(await t.used(t.plain.key.id)).toBe(100);
        expect(t.counted("/v1/lookup/batch", "POST", 499)).toBe(sockets.length);
        if (level === "info") {
          const statuses = t.lines.map((line) => JSON.parse(line) as { msg: string; status: number; units: number }).filter((line) => line.msg === "request");
          expect(statuses.map(({ status, units }) => [status, units])).toEqual([[499, 0], [499, 0], [200, 100]]);
          // The access log still names the peer of the request whose client left after it came.
          expect(t.lines[0]).toContain(`"peer":"${PEER.address}"`);
        }
      } finally {
        await t.close();
      }
    });
  }

  test("a single lookup whose client was gone when its request came (the access log asked for the peer then): 499, nothing charged", async () => {
    const t = await setUp(await fresh(), "info");
    try {
      expect(await t.send("POST", "/v1/lookup", t.plain.secret, closed, { ip: "1.1.1.1" })).toBe(499);
      expect(await t.used(t.plain.key.id)).toBe(0);
    } finally {
      await t.close();
    }
  });
}

describe("SQLite", () => suite(async () => join(dir, `state-${++files}.db`)));
describe.skipIf(!postgresAvailable)("PostgreSQL", () => suite(() => pg.fresh()));

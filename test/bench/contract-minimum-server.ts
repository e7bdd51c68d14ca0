import { TypeCompiler } from "@sinclair/typebox/compiler";
import { KeyCache } from "../../src/access/key-cache.ts";
import { Meter } from "../../src/access/meter.ts";
import { RateLimiter } from "../../src/access/rate-limiter.ts";
import { defaultDataPath } from "../../src/config/paths.ts";
import { LookupRequest } from "../../src/http/schemas.ts";
import { lastPeer, requestIds } from "../../src/http/server.ts";
import { RangeIndex } from "../../src/index/range-index.ts";
import { accessLine } from "../../src/log/access-line.ts";
import { lineBuffer } from "../../src/log/line-buffer.ts";
import { createLogger } from "../../src/log/logger.ts";
import { LookupService } from "../../src/lookup/lookup-service.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";

/**
 * The contract's minimum for the HTTP bench: `bun contract-minimum-server.ts PORT STATE [access-log]`.
 * One hand-written Bun.serve handler for POST /v1/lookup that does only what the contract
 * demands of a single lookup, with iplookup's own domain code and no framework: the
 * Bearer key, the plan's rate limit, the media type, the JSON body and its schema, the
 * address check, the lookup, the unit committed to the SQLite state file before the
 * answer, and X-Units-Consumed (X-Units-Remaining for a limited plan). No request ids,
 * metrics, logs, other routes, or contract-shaped errors (anything wrong is a bare 400).
 * Beside the bare Bun.serve it shows what that work costs on this runtime, whatever the
 * HTTP layer around it. Creates an unlimited key and prints {"key": …, "port": …}.
 *
 * With `access-log`, each request also gets what serve's access log asks of it, done as
 * serve does it: a request id (answered in X-Request-Id), the peer's address from the
 * socket, and one access-log line, batched per event-loop turn and written to stderr.
 * That is the ceiling for single lookups at serve's default settings on this runtime.
 */
const [port = "0", state = ":memory:", mode = ""] = process.argv.slice(2);
const store = SqliteStore.open(state);
const { secret } = await store.createKey("bench", "unlimited");
const keys = await KeyCache.load(store);
const index = RangeIndex.open(defaultDataPath());
const lookups = new LookupService(() => index);
const meter = new Meter(store, () => new Date());
const rates = new RateLimiter(() => Date.now());
const validBody = TypeCompiler.Compile(LookupRequest);
const refused = () => new Response("refused", { status: 400 });

/** Answers one lookup; `caller`, if given, is told the key that made it (the plain handler allocates nothing for it). */
async function lookup(request: Request, headers: Record<string, string>, caller?: { keyId: string | null }): Promise<Response> {
  if (request.method !== "POST" || !request.url.endsWith("/v1/lookup")) return new Response("not found", { status: 404 });
  const authorization = request.headers.get("authorization");
  const key = authorization?.startsWith("Bearer ") ? keys.authenticate(authorization.slice(7)) : null;
  if (!key || rates.take(key.key.id, key.plan.rateLimit) > 0) return refused();
  if (caller) caller.keyId = key.key.id;
  if (request.headers.get("content-type") !== "application/json") return refused();
  const body = (await request.json().catch(() => null)) as unknown;
  if (!validBody.Check(body)) return refused();
  const addresses = lookups.resolve([body.ip]);
  const metered = await meter.charge(key, 1);
  headers["content-type"] = "application/json";
  headers["x-units-consumed"] = String(metered.consumed);
  if (metered.remaining !== null) headers["x-units-remaining"] = String(metered.remaining);
  return new Response(lookups.lookupJson(addresses, false).body, { headers });
}

type PeerOf = { requestIP(request: Request): { address: string } | null };

/** `lookup` with serve's access log around it: request id, peer, one line a request. */
function withAccessLog(): (request: Request, server: PeerOf) => Promise<Response> {
  const lines = lineBuffer((text) => void process.stderr.write(`${text}\n`));
  const logger = createLogger("info", lines.write);
  const requestIdOf = requestIds();
  const peers = lastPeer();
  return async (request, server) => {
    const began = performance.now();
    const requestId = requestIdOf(request);
    const caller: { keyId: string | null } = { keyId: null };
    const response = await lookup(request, { "x-request-id": requestId }, caller);
    const peer = server.requestIP(request);
    const entry = {
      requestId,
      method: request.method,
      route: "/v1/lookup",
      status: response.status,
      keyId: caller.keyId,
      units: response.status === 200 ? 1 : 0,
      durationMs: Math.round((performance.now() - began) * 100) / 100,
      peer: (peer && peers(peer.address)?.text) ?? null,
    };
    logger.logFormatted("info", (time) => accessLine(time, entry));
    return response;
  };
}

const server = Bun.serve({
  hostname: "127.0.0.1",
  port: Number(port),
  fetch: mode === "access-log" ? withAccessLog() : (request) => lookup(request, {}),
  error: refused,
});
console.log(JSON.stringify({ key: secret, port: server.port }));
process.on("SIGTERM", async () => {
  await server.stop(true);
  await store.close();
  process.exit(0);
});

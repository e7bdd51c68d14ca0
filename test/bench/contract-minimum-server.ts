import { TypeCompiler } from "@sinclair/typebox/compiler";
import { KeyCache } from "../../src/access/key-cache.ts";
import { Meter } from "../../src/access/meter.ts";
import { RateLimiter } from "../../src/access/rate-limiter.ts";
import { defaultDataPath } from "../../src/config/paths.ts";
import { LookupRequest } from "../../src/http/schemas.ts";
import { RangeIndex } from "../../src/index/range-index.ts";
import { LookupService } from "../../src/lookup/lookup-service.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";

/**
 * The contract's minimum for the HTTP bench: `bun contract-minimum-server.ts PORT STATE`.
 * One hand-written Bun.serve handler for POST /v1/lookup that does only what the contract
 * demands of a single lookup, with iplookup's own domain code and no framework: the
 * Bearer key, the plan's rate limit, the media type, the JSON body and its schema, the
 * address check, the lookup, the unit committed to the SQLite state file before the
 * answer, and X-Units-Consumed (X-Units-Remaining for a limited plan). No request ids,
 * metrics, logs, other routes, or contract-shaped errors (anything wrong is a bare 400).
 * Beside the bare Bun.serve it shows what that work costs on this runtime, whatever the
 * HTTP layer around it. Creates an unlimited key and prints {"key": …, "port": …}.
 */
const [port = "0", state = ":memory:"] = process.argv.slice(2);
const store = SqliteStore.open(state);
const { secret } = await store.createKey("bench", "unlimited");
const keys = await KeyCache.load(store);
const index = RangeIndex.open(defaultDataPath());
const lookups = new LookupService(() => index);
const meter = new Meter(store, () => new Date());
const rates = new RateLimiter(() => Date.now());
const validBody = TypeCompiler.Compile(LookupRequest);
const refused = () => new Response("refused", { status: 400 });

const server = Bun.serve({
  hostname: "127.0.0.1",
  port: Number(port),
  async fetch(request) {
    if (request.method !== "POST" || !request.url.endsWith("/v1/lookup")) return new Response("not found", { status: 404 });
    const authorization = request.headers.get("authorization");
    const caller = authorization?.startsWith("Bearer ") ? keys.authenticate(authorization.slice(7)) : null;
    if (!caller || rates.take(caller.key.id, caller.plan.rateLimit) > 0) return refused();
    if (request.headers.get("content-type") !== "application/json") return refused();
    const body = (await request.json().catch(() => null)) as unknown;
    if (!validBody.Check(body)) return refused();
    const addresses = lookups.resolve([body.ip]);
    const metered = await meter.charge(caller, 1);
    const headers: Record<string, string> = { "content-type": "application/json", "x-units-consumed": String(metered.consumed) };
    if (metered.remaining !== null) headers["x-units-remaining"] = String(metered.remaining);
    return new Response(lookups.lookupJson(addresses, false).body, { headers });
  },
  error: refused,
});
console.log(JSON.stringify({ key: secret, port: server.port }));
process.on("SIGTERM", async () => {
  await server.stop(true);
  await store.close();
  process.exit(0);
});

import { Elysia } from "elysia";
import type { Cidr } from "../address/cidr.ts";
import type { KeyCache } from "../access/key-cache.ts";
import type { LeaseLimiter } from "../access/lease-limiter.ts";
import type { StoreHealth } from "../access/store-health.ts";
import { Meter, type ChargeOptions, type Metered } from "../access/meter.ts";
import { monotonicMs } from "../access/monotonic-clock.ts";
import { RateLimiter } from "../access/rate-limiter.ts";
import { usageReport } from "../access/usage-report.ts";
import type { RangeIndex } from "../index/range-index.ts";
import type { CorrectionTable } from "../corrections/correction-table.ts";
import { LookupService, type LookupAnswer } from "../lookup/lookup-service.ts";
import type { Store } from "../store/store.ts";
import { checkGate, type RouteTable } from "./gate.ts";
import { readJsonBody } from "./json-body.ts";
import { errorResponse } from "./error-response.ts";
import { corsHeaders, keyCall, preflight, withCors } from "./cors.ts";
import { AnswerHeaders } from "./answer-headers.ts";
import { createLogger, type Logger } from "../log/logger.ts";
import { Metrics } from "../metrics/metrics.ts";
import { descriptorUse } from "../metrics/process-descriptors.ts";
import { docsPage } from "./docs-page.ts";
import { openApiDocument } from "./openapi.ts";
import { callerOf, contextOf } from "./request-context.ts";
import { PUBLIC_ROUTES } from "./routes.ts";
import { AsnSearchQuery, BatchRequest, LookupRequest } from "./schemas.ts";
import { AsnService, type AsnAnswer } from "../asn/asn-service.ts";
import { queryValues } from "./query-values.ts";

/** The clocks the service reads: injected so tests can set the month or step time. */
export interface Clock {
  /** The wall clock: billing periods and timestamps. */
  now(): Date;
  /**
   * Milliseconds that only move forward, for rate limits (default: `monotonicMs`), so a
   * step of the wall clock neither locks keys out nor lets a burst through.
   */
  monotonicMs?(): number;
}

/** The rate limiters a server's threads share (see RateLimiter). */
export interface RateLimits {
  /** Requests per key, at its plan's rate. */
  readonly keys: RateLimiter;
  /** Requests with unknown keys, per client address (see clientThrottleId). */
  readonly failedKeys: RateLimiter;
}

/** What an app is built from; a test builds one in a line. */
export interface AppDeps {
  readonly store: Store;
  readonly keys: KeyCache;
  /** Returns the index to answer from now; a data reload swaps what it returns. */
  readonly index: () => RangeIndex;
  readonly clock: Clock;
  readonly trustProxy?: readonly Cidr[];
  readonly maxBody?: number;
  readonly metrics?: Metrics;
  /** Shared with the server's other threads; new, unshared ones by default. */
  readonly rateLimits?: RateLimits;
  /** The build's version, for /metrics and /openapi.json. */
  readonly version?: string;
  /** Where unhandled errors are logged (default: errors to stderr). */
  readonly logger?: Logger;
  /** On a store several servers share: a key's rate across all of them (see LeaseLimiter). */
  readonly leases?: LeaseLimiter;
  /** Whether the store can be reached; /readyz answers 503 while it cannot. Always, by default. */
  readonly storeHealth?: StoreHealth;
  /** The local corrections to lay over lookups now, or null for none (CONTRACT §15); none by default. */
  readonly corrections?: () => CorrectionTable | null;
}

const DEFAULT_MAX_BODY = 2 * 1024 * 1024;

/**
 * The largest answer body that Bun (1.4) still writes in one send() when the answer is
 * completed after its request's callback has returned, as a lookup answer is (it waits
 * for its units to be committed with the turn's group): Bun assembles such an answer in
 * a 16 KiB buffer, less room for the status line and headers. A larger one would leave
 * uncorked, one send() for each piece of the status line and of every header (27 for a
 * batch of 100), each a TCP segment on loopback. Given as a stream instead, it leaves
 * in one sendmsg() (head and body, chunked) and one more for the last chunk, whatever
 * its size. Measured with wrk, paired runs on one core, against committing a large
 * answer's units at once to answer within the callback (which PostgreSQL cannot do):
 * batches of 100 went from 13,300 to 20,200 a second on a SQLite state, and from 5,800
 * to 17,800 on PostgreSQL.
 */
const CORKED_ANSWER_BYTES = 16 * 1024 - 1024;

/** Builds the HTTP app. It holds no global state: everything comes from `deps`. */
export function createApp(deps: AppDeps) {
  const lookups = new LookupService(deps.index, deps.corrections);
  const asns = new AsnService(deps.index, deps.corrections);
  // A store that can be probed for writes (PostgreSQL) tells its health by its charges too.
  const meter = new Meter(deps.store, () => deps.clock.now(), deps.store.probeWrite ? deps.storeHealth : undefined, deps.keys);
  const monotonic = deps.clock.monotonicMs?.bind(deps.clock) ?? monotonicMs;
  const rates = deps.rateLimits?.keys ?? new RateLimiter(monotonic);
  const failedKeys = deps.rateLimits?.failedKeys ?? new RateLimiter(monotonic);
  const maxBody = deps.maxBody ?? DEFAULT_MAX_BODY;
  const trustProxy = deps.trustProxy ?? [];
  const metrics = deps.metrics ?? new Metrics(Metrics.table(PUBLIC_ROUTES, 1));
  const version = deps.version ?? "development";
  const answerHeaders = new AnswerHeaders();
  const logger = deps.logger ?? createLogger("error", (line) => process.stderr.write(`${line}\n`));
  let routeTable: RouteTable | undefined;
  let openApi: string | undefined;
  let docs: string | undefined;

  // standardHostname: false, because Elysia otherwise looks for the path's first "/" from
  // the URL's 12th character on, which skips it for hosts shorter than "a.bc" ("ip",
  // "geo", a one-word service name behind a proxy) and answers 404. URLs here are always
  // absolute and http, whatever the request-target was (requestForApp in path.ts), and the
  // gate reads the path by the router's own rule (pathOf).
  const controls = keyCall({ now: () => deps.clock.now().getTime(), trustProxy });
  const gate = { routes: (): RouteTable => (routeTable ??= routesOf(app)), keys: deps.keys, rates, failedKeys, trustProxy, maxBody, leases: deps.leases, controls };
  /** A request whose key had to be looked up in the store, or that waited for its rate's token: refused, or run again from the top. */
  const afterKeyLookup = (lookup: Promise<void>, request: Request): Promise<Response> =>
    lookup.then(
      (): Promise<Response> => app.handle(request),
      // A refusal once the key is known (a rate lease) still tells the browser what the key allows it.
      (error: unknown) => withCors(errorResponse(error, "UNKNOWN", logger), contextOf(request).cors),
    );
  // Written so the framework sees a synchronous hook (it inspects the source for calls
  // after "return" or "=>"): only a key lookup makes a promise, and only then does the
  // request wait for one.
  const app = new Elysia({ normalize: false, strictPath: true, handler: { standardHostname: false } })
    .onRequest(({ request }) => {
      // A CORS preflight on /v1 is answered here, before the gate: it carries no key.
      const early: Response | undefined = request.method === "OPTIONS" ? preflight(request, gate.routes()) : undefined;
      if (early) return early;
      const lookup = checkGate(request, gate);
      return lookup && afterKeyLookup(lookup, request);
    })
    .onParse(({ request }) => readJsonBody(request, maxBody))
    .onError(({ error, code, request }) => withCors(errorResponse(error, code, logger), contextOf(request).cors))
    .get("/healthz", () => json({ status: "ok" }))
    .get("/readyz", () =>
      deps.storeHealth?.reachable === false
        ? json({ status: "unavailable", reason: "the state store cannot be reached" }, 503)
        : json({ status: "ready", data_version: deps.index().info.dataVersion, data_built_at: deps.index().info.builtAt }),
    )
    .get("/metrics", ({ set }) => {
      set.headers["content-type"] = "text/plain; version=0.0.4; charset=utf-8";
      const info = deps.index().info;
      return metrics.render({ now: deps.clock.now(), dataBuiltAt: info.builtAt, dataVersion: info.dataVersion, dataSourceVersions: info.version, dataSources: info.sources, version, descriptors: descriptorUse() });
    })
    .get("/openapi.json", ({ set }) => {
      set.headers["content-type"] = "application/json";
      return (openApi ??= JSON.stringify(openApiDocument(version)));
    })
    .get("/docs", ({ set }) => {
      set.headers["content-type"] = "text/html; charset=utf-8";
      return (docs ??= docsPage(version));
    })
    .post(
      "/v1/lookup",
      async ({ body, request }) => {
        const addresses = lookups.resolve([body.ip]);
        const metered = await meter.charge(callerOf(request), 1, chargeOptions(request));
        metrics.addLookups(1);
        metrics.addUnits(1);
        return jsonResponse(lookups.lookupJson(addresses, false), metered, request, answerHeaders);
      },
      { body: LookupRequest },
    )
    .post(
      "/v1/lookup/batch",
      async ({ body, request }) => {
        const caller = callerOf(request);
        lookups.checkBatchSize(body.ips.length, caller.plan.maxBatchSize);
        const addresses = lookups.resolve(body.ips);
        const answer = lookups.lookupJson(addresses, true);
        const metered = await meter.charge(caller, addresses.length, chargeOptions(request));
        metrics.addLookups(addresses.length);
        metrics.addUnits(addresses.length);
        return jsonResponse(answer, metered, request, answerHeaders);
      },
      { body: BatchRequest },
    )
    .get("/v1/asn/:asn", async ({ params, request }) => {
      // A bad or special-purpose number is refused before anything is charged.
      const answer = await asns.answer(asns.check(params.asn));
      const metered = await meter.charge(callerOf(request), 1, chargeOptions(request));
      metrics.addUnits(1);
      return jsonResponse(answer, metered, request, answerHeaders);
    })
    .get(
      "/v1/asn",
      async ({ request }) => {
        // Every q, not the one the framework keeps: a repeated q is refused.
        const answer = await asns.search(asns.checkQuery(queryValues(request.url, "q")));
        const metered = await meter.charge(callerOf(request), 1, chargeOptions(request));
        metrics.addUnits(1);
        return jsonResponse(answer, metered, request, answerHeaders);
      },
      { query: AsnSearchQuery },
    )
    .get("/v1/me", ({ request }) => {
      const client = contextOf(request).findLiveClient(request, trustProxy);
      if (!client) throw new Error("the request has no peer address (it did not come through a socket)");
      return json({ ip: client.text, version: client.version }, 200, request);
    })
    .get("/v1/usage", async ({ request }) => {
      const caller = callerOf(request);
      return json(await usageReport(deps.store, caller.key, caller.plan, deps.clock.now()), 200, request);
    });
  return app;
}

export type App = ReturnType<typeof createApp>;

/** What a charge needs of its request: its signal and its connection, to see a client gone, and when it came. */
function chargeOptions(request: Request): ChargeOptions {
  const context = contextOf(request);
  return { signal: request.signal, receivedAt: context.receivedAt, connection: context };
}

/**
 * A JSON answer. Every JSON answer says `application/json` alone: RFC 8259 defines no
 * charset parameter (JSON is UTF-8), and a client comparing the header sees one value.
 */
function json(value: unknown, status = 200, request?: Request): Response {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (request) corsHeaders(contextOf(request).cors, headers);
  return new Response(JSON.stringify(value), { status, headers });
}

/**
 * A lookup's answer: JSON written by the lookup service, with the unit, data-version,
 * request-id and CORS headers (see AnswerHeaders). Built in, rather than set by the
 * server afterwards: setting a header on a built Response costs more than building it
 * with the header.
 */
function jsonResponse(answer: LookupAnswer | AsnAnswer, metered: Metered, request: Request, headers: AnswerHeaders): Response {
  const context = contextOf(request);
  context.units = metered.consumed;
  context.requestIdWritten = context.requestId !== undefined;
  return new Response(bodyOf(answer), {
    headers: headers.for({ dataVersion: answer.dataVersion, consumed: metered.consumed, remaining: metered.remaining, cors: context.cors, requestId: context.requestId }),
  });
}

/**
 * What a Response is built from: a stream for a body past CORKED_ANSWER_BYTES; a lent
 * body (LookupAnswer) that is not streamed is copied, since a Response keeps its body
 * for as long as it likes, and its buffer is given back at once.
 */
function bodyOf(answer: LookupAnswer | AsnAnswer): Uint8Array | ReadableStream<Uint8Array> {
  const release = "release" in answer ? answer.release : undefined;
  if (answer.body.length > CORKED_ANSWER_BYTES) return streamOf(answer.body, release);
  if (!release) return answer.body;
  const copy = answer.body.slice();
  release();
  return copy;
}

/**
 * A body given as a stream of one chunk (see CORKED_ANSWER_BYTES): a direct stream, which
 * Bun writes to the socket as it is written, without a queue (about 1.5 µs less an
 * answer than a default stream's enqueue, measured on a bare Bun.serve). A write that
 * meets backpressure is still taken; close() then ends the answer once it is sent.
 */
function streamOf(body: Uint8Array, release?: () => void): ReadableStream<Uint8Array> {
  return new ReadableStream({
    type: "direct",
    pull(controller) {
      // Bun sends what the socket takes at once and copies the rest into the answer's
      // own buffer before write() returns (under backpressure too: a test holds it), so
      // the body's buffer may serve another answer from here on.
      controller.write(body);
      release?.();
      controller.close();
    },
  });
}

/**
 * The app's routes by path. A path that answers GET answers HEAD too (RFC 9110 asks it
 * of every server, and health checks use it): Elysia answers HEAD with the GET
 * handler's status and headers and no body.
 */
function routesOf(app: { routes: ReadonlyArray<{ path: string; method: string }> }): RouteTable {
  const table = new Map<string, string[]>();
  for (const route of app.routes) {
    const methods = table.get(route.path) ?? [];
    methods.push(route.method);
    if (route.method === "GET") methods.push("HEAD");
    table.set(route.path, methods);
  }
  return table;
}

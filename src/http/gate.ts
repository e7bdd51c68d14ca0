import { clientThrottleId } from "../access/client-throttle-id.ts";
import type { KeyCache } from "../access/key-cache.ts";
import type { LeaseLimiter } from "../access/lease-limiter.ts";
import type { RateLimiter } from "../access/rate-limiter.ts";
import type { Cidr } from "../address/cidr.ts";
import { ApiError } from "../errors/api-error.ts";
import type { ActiveKey } from "../store/store.ts";
import { pathOf } from "./path.ts";
import { contextOf, type RequestContext } from "./request-context.ts";
import { bodyTooLarge } from "./json-body.ts";
import { checkContentEncoding, isJsonMediaType } from "./media-type.ts";
import { checkKeyControls, type KeyCall } from "../access/key-controls.ts";
import { REALM, unknownKeyError } from "../access/unknown-key.ts";

/** Which methods each path answers; built from the app's own routes. */
export type RouteTable = ReadonlyMap<string, readonly string[]>;

export interface GateOptions {
  readonly routes: () => RouteTable;
  readonly keys: KeyCache;
  readonly rates: RateLimiter;
  /** Failed key attempts, by client address (see clientThrottleId). */
  readonly failedKeys: RateLimiter;
  /** Proxies whose X-Forwarded-For names the client (as /v1/me reads it). */
  readonly trustProxy: readonly Cidr[];
  readonly maxBody: number;
  /** A key's rate across every server on a shared store (PostgreSQL); none on SQLite. */
  readonly leases?: LeaseLimiter;
  /** What the keys' own checks (CONTRACT §16) read of a request: see keyCall. */
  readonly controls: KeyCall<Request>;
}

/**
 * Failed key attempts one client may make a second (the burst is the same). Past that,
 * its requests with bad keys get 429 instead of 401, which slows a key-guessing client
 * down, while requests from that client with a valid key go on as before: nobody is
 * locked out by someone else's bad guesses. The client is the one /v1/me names, trusted
 * proxies honoured, so a guesser behind the proxy does not hold up everyone behind it;
 * an IPv6 client counts per /64.
 */
export const FAILED_KEYS_PER_SECOND = 10;

/**
 * The checks that come before a body is read, in the contract's order: route, key, rate,
 * media type (and content coding: none), declared body size. Throws the first ApiError
 * that applies; records the matched route in the request's context, and the caller as
 * soon as its key is found, so that the access log names the key of a request refused
 * after that (by the key's own checks, its rate, the media type, …) too.
 *
 * A secret the key cache does not know is looked up in the store: then the gate returns
 * that lookup, which rejects with `invalid_key` when no active key has the secret, and
 * resolves once the cache holds the key; the caller then runs the request again, and
 * this time every check runs here, in order. The same for a request whose key's rate
 * needs tokens leased from a shared store (`leases`): the promise rejects with
 * `rate_limited` or store_unavailable, or resolves once the request holds its token,
 * and the run again takes no second one. Every other request is checked synchronously
 * (the common case costs no promise).
 */
export function checkGate(request: Request, options: GateOptions): Promise<void> | undefined {
  const path = pathOf(request.url);
  const context = contextOf(request);
  const matched = matchRoute(options.routes(), path);
  if (!matched) throw new ApiError("not_found", `there is no route ${path}`);
  const methods = matched.methods;
  context.route = matched.route;
  if (!methods.includes(request.method)) {
    const allow = allowOf(path, methods);
    throw new ApiError("method_not_allowed", `${path} answers ${allow}, not ${request.method}`, {}, { allow });
  }
  if (!path.startsWith("/v1/")) return;

  const caller = authenticate(request, context, options);
  if (caller instanceof Promise) return caller;
  // Known from here on, for the access log, whatever refuses the request next.
  context.caller = caller;
  // The key's own checks (expiry, address, origin), for a key that has any: CONTRACT §16.
  // It leaves what the answer, a refusal included, may tell a browser in context.cors.
  if (caller.key.controls !== undefined || caller.secretValidUntil !== undefined) checkKeyControls(caller, options.controls, request, context);
  if (!context.rateTaken) {
    // This server's share first (no store involved), then, on a shared store, the key's
    // rate across all servers.
    const wait = options.rates.take(caller.key.id, caller.plan.rateLimit);
    if (wait > 0) throw rateLimited(caller, wait);
    const leased = options.leases?.take(caller.key.id, caller.plan.rateLimit);
    if (leased instanceof Promise) {
      return leased.then((after) => {
        if (after > 0) throw rateLimited(caller, after);
        context.rateTaken = true;
      });
    }
    if (leased) throw rateLimited(caller, leased);
  }
  if (request.method === "POST") {
    if (!isJsonMediaType(request.headers.get("content-type"))) {
      throw new ApiError("unsupported_media_type", "send the body as application/json (charset utf-8, if any)");
    }
    checkContentEncoding(request.headers.get("content-encoding"));
    const declared = request.headers.get("content-length");
    if (declared !== null && Number(declared) > options.maxBody) throw bodyTooLarge(options.maxBody);
  }
  return undefined;
}

/**
 * Whether OPTIONS on a path is answered, as a CORS preflight (preflight in cors.ts): on
 * the /v1 routes, and no others.
 */
export function answersPreflight(path: string): boolean {
  return path.startsWith("/v1/");
}

/**
 * The Allow of a route: every method it answers (RFC 9110 §10.2.1), so OPTIONS too where
 * a preflight answers it, though the route table (the app's own routes) does not hold it.
 */
export function allowOf(path: string, methods: readonly string[]): string {
  return (answersPreflight(path) ? [...methods, "OPTIONS"] : methods).join(", ");
}

/**
 * The route a path takes: the route of that exact path, else the first route pattern
 * whose `:name` segments each match one non-empty segment (`/v1/asn/:asn`). The pattern
 * is what the metrics and the access log name the request by.
 */
export function matchRoute(routes: RouteTable, path: string): { route: string; methods: readonly string[] } | undefined {
  const exact = routes.get(path);
  if (exact) return { route: path, methods: exact };
  const segments = path.split("/");
  for (const [route, methods] of routes) {
    if (!route.includes("/:")) continue;
    const parts = route.split("/");
    if (parts.length !== segments.length) continue;
    if (parts.every((part, i) => (part.startsWith(":") ? segments[i] !== "" : part === segments[i]))) return { route, methods };
  }
  return undefined;
}

function rateLimited(caller: ActiveKey, wait: number): ApiError {
  return new ApiError("rate_limited", `this key's plan allows ${caller.plan.rateLimit} request${caller.plan.rateLimit === 1 ? "" : "s"} a second`, { retry_after: wait }, { "retry-after": String(wait) });
}

function authenticate(request: Request, context: RequestContext, options: GateOptions): ActiveKey | Promise<void> {
  const header = request.headers.get("authorization");
  const token = header !== null && /^bearer /i.test(header) ? header.slice(7).trim() : "";
  if (token === "") {
    throw new ApiError("missing_key", "send an API key as Authorization: Bearer <key>", {}, { "www-authenticate": REALM });
  }
  const caller = options.keys.authenticate(token);
  if (caller) return caller;
  // Only a secret the cache does not know makes the store look, and no more often than
  // the failed-key throttle allows from one address. A request whose secret is being
  // looked up already joins that lookup: it makes the store look no more, and costs no
  // token (a client's first requests with a new key, sent on many connections at once,
  // are not throttled as guesses). A client that has gone is looked up no more than it
  // is throttled: its request is recorded as gone.
  const client = context.findLiveClient(request, options.trustProxy);
  const wait = client && !options.keys.isLookingUp(token) ? options.failedKeys.take(clientThrottleId(client), FAILED_KEYS_PER_SECOND) : 0;
  if (wait > 0) {
    throw new ApiError("rate_limited", "too many requests with invalid keys from this address; slow down", { retry_after: wait }, { "retry-after": String(wait) });
  }
  return options.keys.lookUp(token).then((found) => {
    if (!found) throw unknownKeyError();
  });
}

import type { Cidr } from "../address/cidr.ts";
import type { CorsGrant, KeyCall } from "../access/key-controls.ts";
import { ApiError } from "../errors/api-error.ts";
import { allowOf, answersPreflight, matchRoute, type RouteTable } from "./gate.ts";
import { pathOf } from "./path.ts";
import { contextOf } from "./request-context.ts";

/** What the key checks read beyond the request: the wall clock and the trusted proxies. */
export interface KeyControlOptions {
  /** Milliseconds since the epoch. */
  readonly now: () => number;
  readonly trustProxy: readonly Cidr[];
}

/** The headers a browser script may read on a /v1 answer. */
const EXPOSED = "X-Units-Consumed, X-Units-Remaining, X-Data-Version, X-Request-Id, Retry-After";
/** How long a browser may keep a preflight's answer, in seconds. */
const PREFLIGHT_MAX_AGE = "600";

/**
 * What the key's checks (src/access/key-controls.ts) read of a /v1 request, made once for
 * an app: the client address as /v1/me finds it (trusted proxies honoured), asked only
 * for a key with an allowlist, and the Origin header.
 */
export function keyCall(options: KeyControlOptions): KeyCall<Request> {
  return {
    now: options.now,
    client: (request) => contextOf(request).findLiveClient(request, options.trustProxy),
    origin: (request) => request.headers.get("origin"),
  };
}

/**
 * The CORS headers of an answer to a request whose key lists origins (`grant` not
 * undefined): the origin allowed, if any, with the headers a script may read, and
 * `Vary: Origin` either way, since the answer depends on it.
 */
export function corsHeaders(grant: CorsGrant, headers: Record<string, string>): void {
  if (grant === undefined) return;
  headers.vary = "Origin";
  if (grant === null) return;
  headers["access-control-allow-origin"] = grant;
  headers["access-control-expose-headers"] = EXPOSED;
}

/** corsHeaders on a Response built already (an error's). */
export function withCors(response: Response, grant: CorsGrant): Response {
  if (grant === undefined) return response;
  const headers: Record<string, string> = {};
  corsHeaders(grant, headers);
  for (const [name, value] of Object.entries(headers)) response.headers.set(name, value);
  return response;
}

/**
 * A CORS preflight (`OPTIONS` on a /v1 route), answered without a key and without
 * charging or counting against any rate: a browser sends no Authorization on it. It
 * allows any origin to try, since the request that follows is checked against its key's
 * allowed_origins, and answers nothing about any key. Undefined for a path outside /v1
 * (the gate answers those: 405 with Allow); `not_found` for an unknown /v1 path.
 */
export function preflight(request: Request, routes: RouteTable): Response | undefined {
  const path = pathOf(request.url);
  if (!answersPreflight(path)) return undefined;
  // The route the request that follows would take, patterns included (/v1/asn/:asn).
  const matched = matchRoute(routes, path);
  if (!matched) throw new ApiError("not_found", `there is no route ${path}`);
  const methods = matched.methods;
  // Counted, and logged, under its route.
  contextOf(request).route = matched.route;
  const headers: Record<string, string> = {
    // For a plain OPTIONS (no Origin) too: what the route answers, as its 405 says.
    allow: allowOf(path, methods),
    "access-control-allow-methods": methods.join(", "),
    "access-control-allow-headers": "Authorization, Content-Type",
    "access-control-max-age": PREFLIGHT_MAX_AGE,
    vary: "Origin, Access-Control-Request-Method, Access-Control-Request-Headers",
  };
  const origin = request.headers.get("origin");
  if (origin !== null) headers["access-control-allow-origin"] = origin;
  return new Response(null, { status: 204, headers });
}

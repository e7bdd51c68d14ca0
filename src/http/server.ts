import type { Address } from "../address/address.ts";
import type { Cidr } from "../address/cidr.ts";
import { parseAddress } from "../address/parse.ts";
import { ApiError } from "../errors/api-error.ts";
import { accessLine, type AccessEntry } from "../log/access-line.ts";
import type { Logger } from "../log/logger.ts";
import type { Metrics } from "../metrics/metrics.ts";
import type { App } from "./app.ts";
import { requestForApp } from "./path.ts";
import { problemResponse } from "./problem.ts";
import { attachContext, RequestContext } from "./request-context.ts";
import { hideBodyStream } from "./request-body.ts";

export interface ListenOptions {
  /** Proxies whose X-Forwarded-For is believed (--trust-proxy): with any, the access log names the client beside the peer. */
  readonly trustProxy?: readonly Cidr[];
  readonly host: string;
  readonly port: number;
  /** Lets several listeners share the port (SO_REUSEPORT): the threads of `serve --workers`, and a listener replacing another. */
  readonly reusePort?: boolean;
  /**
   * While it returns true, every answer says `Connection: close`: a listener being
   * replaced moves its clients' keep-alive connections to the new one at their next
   * request, instead of closing them under a request on its way.
   */
  readonly closeConnections?: () => boolean;
  /** HTTPS with this certificate and key (PEM). */
  readonly tls?: { readonly cert: string; readonly key: string };
  readonly metrics: Metrics;
  readonly logger: Logger;
}

/** A request id a proxy may hand on: short, and only characters that need no escaping in a log line. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Request ids for one listener: the proxy's X-Request-Id when it sent a sane one, else
 * a random prefix (after `label`, if any) and a counter, unique and cheap.
 */
export function requestIds(label = ""): (request: Request) => string {
  const prefix = `${label}${crypto.randomUUID().slice(0, 8)}`;
  let counter = 0;
  return (request) => {
    const incoming = request.headers.get("x-request-id");
    return incoming && REQUEST_ID.test(incoming) ? incoming : `${prefix}-${(++counter).toString(36)}`;
  };
}

/** Bun dates every answer but those to HEAD, which carry GET's headers otherwise: date them too. */
export function dateHeadAnswer(request: Request, response: Response): void {
  if (request.method === "HEAD" && !response.headers.has("date")) response.headers.set("date", new Date().toUTCString());
}

/** What an app answers for a request it threw on: a bug, told without internals. */
export function unhandled(logger: Logger, requestId: string, error: unknown): Response {
  logger.log("error", "unhandled error", { request_id: requestId, error: String(error) });
  return problemResponse(new ApiError("internal_error", "the server failed to answer this request"));
}

/**
 * The peer's address as the socket gives it. A dual-stack listener sees IPv4 clients as
 * IPv4-mapped IPv6 (`::ffff:192.0.2.1`): read as the IPv4 address they carry, which is
 * what parsing the whole text gives too, at a fraction of the cost.
 */
export function peerAddress(text: string): Address | null {
  if (text.startsWith("::ffff:") && text.includes(".", 7)) return parseAddress(text.slice(7));
  return parseAddress(text);
}

/**
 * `peerAddress` with the last peer kept: behind a proxy or a load balancer every
 * request comes from the same few addresses, and a client's requests on a keep-alive
 * connection often follow each other, so most requests skip the parse (Addresses are
 * never changed once made, so one serves many requests).
 */
export function lastPeer(): (text: string) => Address | null {
  let lastText: string | undefined;
  let last: Address | null = null;
  return (text) => {
    if (text !== lastText) {
      last = peerAddress(text);
      lastText = text;
    }
    return last;
  };
}

/**
 * Serves the app on a socket. Around every request it records the TCP peer for
 * /v1/me, gives the response an X-Request-Id (the proxy's, when it sent a sane one),
 * counts it in the metrics and writes the access log line: route, status, key id
 * (never the secret), units and duration.
 */
export function listen(app: App, options: ListenOptions) {
  return Bun.serve({
    hostname: options.host,
    port: options.port,
    reusePort: options.reusePort ?? false,
    tls: options.tls,
    // Bodies past --max-body are refused by the app with a contract error, and the app
    // never buffers more than that; Bun's own limit only has to stay out of the way.
    maxRequestBodySize: Number.MAX_SAFE_INTEGER,
    fetch: requestHandler(app, options),
  });
}

/** What the handler asks of the socket's server: the peer of a request. */
export interface PeerSource {
  requestIP(request: Request): { address: string } | null;
}

/** The handler `listen` serves with: everything it does around the app, for one request. */
export function requestHandler(app: App, options: Pick<ListenOptions, "closeConnections" | "metrics" | "logger" | "trustProxy">) {
  const { metrics, logger } = options;
  const trustProxy = options.trustProxy ?? [];
  const requestIdOf = requestIds();
  const peers = lastPeer();
  return async function fetch(received: Request, server: PeerSource): Promise<Response> {
      const began = performance.now();
      const request = requestForApp(received);
      const requestId = requestIdOf(request);
      const context = new RequestContext(
        requestId,
        () => {
          const peer = server.requestIP(received);
          return peer ? peers(peer.address) : null;
        },
        began,
      );
      attachContext(request, context);
      // The access log names the peer, asked once a request either way: asked now, it is
      // known still when the client leaves before its answer (the socket's peer is gone then).
      if (logger.enabled("info")) context.findPeer();
      // The framework asks request.body only whether a body came: see request-body.ts.
      hideBodyStream(request);
      let response: Response;
      try {
        response = await app.fetch(request);
      } catch (error) {
        response = unhandled(logger, requestId, error);
      }
      const seconds = (performance.now() - began) / 1000;
      const route = context.route ?? "other";
      metrics.observeRequest(route, request.method, response.status, seconds);
      if (!context.requestIdWritten) response.headers.set("x-request-id", requestId);
      if (options.closeConnections?.()) response.headers.set("connection", "close");
      dateHeadAnswer(request, response);
      if (logger.enabled("info")) {
        const entry: AccessEntry = {
          requestId,
          method: request.method,
          route,
          status: response.status,
          keyId: context.caller?.key.id ?? null,
          units: context.units,
          durationMs: Math.round(seconds * 100_000) / 100,
          peer: context.findPeer()?.text ?? null,
          client: trustProxy.length === 0 ? undefined : (context.findClient(request, trustProxy)?.text ?? null),
        };
        logger.logFormatted("info", (time) => accessLine(time, entry));
      }
      return response;
  };
}

import { parseAddress } from "../address/parse.ts";
import { ApiError } from "../errors/api-error.ts";
import type { Logger } from "../log/logger.ts";
import type { Metrics } from "../metrics/metrics.ts";
import type { App } from "./app.ts";
import { problemResponse } from "./problem.ts";
import { attachContext, RequestContext } from "./request-context.ts";

export interface ListenOptions {
  readonly host: string;
  readonly port: number;
  /** Lets several processes listen on one port (SO_REUSEPORT), for `serve --workers`. */
  readonly reusePort?: boolean;
  readonly metrics: Metrics;
  readonly logger: Logger;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Request ids: this process's random prefix and a counter, unique and cheap. */
function requestIds(): () => string {
  const prefix = crypto.randomUUID().slice(0, 8);
  let counter = 0;
  return () => `${prefix}-${(++counter).toString(36)}`;
}

/**
 * Serves the app on a socket. Around every request it records the TCP peer for
 * /v1/me, gives the response an X-Request-Id (the proxy's, when it sent a sane one),
 * counts it in the metrics and writes the access log line: route, status, key id
 * (never the secret), units and duration.
 */
export function listen(app: App, options: ListenOptions) {
  const { metrics, logger } = options;
  const nextRequestId = requestIds();
  return Bun.serve({
    hostname: options.host,
    port: options.port,
    reusePort: options.reusePort ?? false,
    // Bodies past --max-body are refused by the app with a contract error, and the app
    // never buffers more than that; Bun's own limit only has to stay out of the way.
    maxRequestBodySize: Number.MAX_SAFE_INTEGER,
    async fetch(request, server) {
      const began = performance.now();
      const incomingId = request.headers.get("x-request-id");
      const requestId = incomingId && REQUEST_ID.test(incomingId) ? incomingId : nextRequestId();
      const context = new RequestContext(requestId, () => {
        const peer = server.requestIP(request);
        return peer ? parseAddress(peer.address) : null;
      });
      attachContext(request, context);
      let response: Response;
      try {
        response = await app.fetch(request);
      } catch (error) {
        logger.log("error", "unhandled error", { request_id: requestId, error: String(error) });
        response = problemResponse(new ApiError("internal_error", "the server failed to answer this request"));
      }
      const seconds = (performance.now() - began) / 1000;
      const route = context.route ?? "other";
      metrics.observeRequest(route, request.method, response.status, seconds);
      if (!context.requestIdWritten) response.headers.set("x-request-id", requestId);
      // Bun dates every answer but those to HEAD, which carry GET's headers otherwise.
      if (request.method === "HEAD" && !response.headers.has("date")) response.headers.set("date", new Date().toUTCString());
      if (logger.enabled("info")) logger.log("info", "request", {
        request_id: requestId,
        method: request.method,
        route,
        status: response.status,
        key_id: context.caller?.key.id ?? null,
        units: Number(response.headers.get("x-units-consumed") ?? 0),
        duration_ms: Math.round(seconds * 100_000) / 100,
        peer: context.findPeer()?.text ?? null,
      });
      return response;
    },
  });
}

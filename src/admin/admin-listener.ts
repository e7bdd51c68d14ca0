import { requestForApp } from "../http/path.ts";
import { dateHeadAnswer, requestIds, unhandled } from "../http/server.ts";
import type { DataSetInfo } from "../index/network-record.ts";
import type { CorrectionTable } from "../corrections/correction-table.ts";
import type { RangeIndex } from "../index/range-index.ts";
import type { Logger } from "../log/logger.ts";
import { bindError, claimPort } from "../serve/port.ts";
import { RetiringListeners } from "../serve/retiring-listeners.ts";
import type { TlsPair } from "../serve/tls.ts";
import { retryWhileLocked } from "../store/lock-retry.ts";
import { openStore } from "../store/open-store.ts";
import type { DeliveryState } from "../store/store.ts";
import { adminRequestInfo, createAdminApp } from "./admin-app.ts";

export interface AdminListenerOptions {
  readonly host: string;
  readonly port: number;
  /** The --state location: the listener opens a store connection of its own there. */
  readonly statePath: string;
  readonly logger: Logger;
  readonly now: () => Date;
  readonly version: string;
  /** Threads serving the public port, for /admin/v1/status. */
  readonly workers: number;
  readonly dataInfo: () => DataSetInfo;
  /** The range index answering now, for the console's AS lookups. */
  readonly index?: () => RangeIndex;
  /** The local corrections the lookups answer with now, which the console's AS lookups follow (none by default). */
  readonly corrections?: () => CorrectionTable | null;
  /** Serve HTTPS with this certificate and key (serve's --tls-cert, --tls-key). */
  readonly tls?: TlsPair;
  /** Hears of each attempt of a test event sent from here (for the server's /metrics). */
  readonly onWebhookAttempt?: (state: DeliveryState) => void;
}

export interface AdminListener {
  readonly url: URL;
  /**
   * Listens with a renewed certificate: a new socket joins the port (SO_REUSEPORT), and
   * RETIRE_MS later the old one stops accepting and finishes its requests in flight.
   * Unlike the public port's (which keeps answering for a second, see serving-thread.ts),
   * it then closes its idle keep-alive connections at once, so that every new connection
   * from then on gets the renewed certificate: a browser resends a request that meets a
   * reused connection closed before any answer, and the admin port's clients are the
   * console and scripts that open a connection a command.
   */
  relisten(tls: TlsPair): void;
  /** Finishes the admin requests in flight, then closes the listener's store connection. */
  stop(): Promise<void>;
}

/** How long an admin write may wait for another process's lock on the state store. */
const ADMIN_LOCK_WAIT_MS = 2000;

const ADMIN_FLAGS = { port: "--admin-port", host: "--admin-host" } as const;

/**
 * How long a listener replaced by a renewed certificate keeps accepting. Closing a
 * listening socket resets the connections still in its accept queue (unless the kernel
 * migrates them, net.ipv4.tcp_migrate_req), and Bun resets those it accepted whose TLS
 * handshake has not begun; a reload blocks this thread for a while (reading and checking
 * the pair, the public listener's relisten), during which the old socket's queue fills.
 * A few turns of the event loop take those connections in and read their ClientHello.
 */
const RETIRE_MS = 50;

/**
 * The admin listener (`serve --admin-host --admin-port`): the admin app on a socket of
 * its own, on the main thread only. Admin traffic is light, and what it changes reaches
 * every thread (and every server on the same PostgreSQL database) the way CLI changes do:
 * each write moves the store's change counter, which every thread's key cache polls.
 *
 * Around each request: an X-Request-Id, X-Content-Type-Options: nosniff, and an
 * access-log line with the admin token's id (never a token or a key's secret).
 */
export async function startAdminListener(options: AdminListenerOptions): Promise<AdminListener> {
  // Admin writes never wait for a lock on the thread, which serves lookups too: on SQLite
  // they are tried again asynchronously, on PostgreSQL a lock wait ends; either way 503
  // store_unavailable after ADMIN_LOCK_WAIT_MS (CONTRACT §13).
  const store = retryWhileLocked(await openStore(options.statePath, { lockWaitMs: ADMIN_LOCK_WAIT_MS, lockTimeoutMs: ADMIN_LOCK_WAIT_MS, walAutoCheckpoint: false }), ADMIN_LOCK_WAIT_MS, options.statePath);
  const { logger } = options;
  const app = createAdminApp({
    store,
    now: options.now,
    version: options.version,
    workers: options.workers,
    // The admin listener lives as long as the server's process.
    uptimeSeconds: () => process.uptime(),
    dataInfo: options.dataInfo,
    index: options.index,
    corrections: options.corrections,
    logger,
    onWebhookAttempt: options.onWebhookAttempt,
  });
  const requestIdOf = requestIds("admin-");
  const listen = (port: number, tls: TlsPair | undefined) =>
    Bun.serve({
      hostname: options.host,
      port,
      // Only for relisten: the port is first bound alone (claimPort), so it is never
      // shared with another program, another iplookup included.
      reusePort: true,
      tls,
      async fetch(received, socket) {
        const began = performance.now();
        // One path for the gate and the router, whatever the request-target (see pathOf).
        const request = requestForApp(received);
        const requestId = requestIdOf(request);
        // Asked before the answer: a client that leaves first is still named in the log.
        const peer = logger.enabled("info") ? (socket.requestIP(received)?.address ?? null) : null;
        let response: Response;
        try {
          response = await app.handle(request);
        } catch (error) {
          response = unhandled(logger, requestId, error);
        }
        response.headers.set("x-request-id", requestId);
        // Here, so that every answer has it whatever made it (a route, a refusal, an unhandled
        // error, the console's files): a browser reads no admin answer as other than its
        // Content-Type says, and JSON and problem+json ones quote what a caller chose.
        response.headers.set("x-content-type-options", "nosniff");
        dateHeadAnswer(request, response);
        if (logger.enabled("info")) {
          const info = adminRequestInfo(request);
          logger.log("info", "admin request", {
            request_id: requestId,
            method: request.method,
            route: info?.route ?? "other",
            status: response.status,
            admin_token_id: info?.token?.id ?? null,
            duration_ms: Math.round(performance.now() - began),
            peer,
          });
        }
        return response;
      },
    });
  let port: number;
  let server: ReturnType<typeof listen>;
  try {
    port = claimPort(options.host, options.port, ADMIN_FLAGS);
    server = listen(port, options.tls);
  } catch (error) {
    await store.close();
    throw bindError(error, options.host, options.port, ADMIN_FLAGS);
  }
  let retired: Promise<void>[] = [];
  /** Listeners replaced by a renewed certificate that still accept, until RETIRE_MS has passed. */
  const retiring = new RetiringListeners<ReturnType<typeof listen>>(RETIRE_MS, (old) => retired.push(old.stop()));
  return {
    url: server.url,
    relisten(tls) {
      const old = server;
      server = listen(port, tls);
      retiring.retire(old);
    },
    async stop() {
      // A stop does not wait for a retiring listener's turn: it stops with the current one.
      retiring.stopAll();
      await Promise.all([server.stop(), ...retired]);
      retired = [];
      await store.close();
    },
  };
}

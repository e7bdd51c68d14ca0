import type { Address } from "../address/address.ts";
import type { ActiveKey } from "../store/store.ts";

/**
 * What the layers around the app learn about a request before the framework sees it:
 * the TCP peer (from the socket) and the authenticated key (from the gate, which runs
 * before the body is parsed, earlier than any per-request context the framework
 * offers). Entries go with their requests.
 */
interface RequestContext {
  /** The peer, or how to find it: asking the socket costs, and few routes need it. */
  peer?: Address | (() => Address | null);
  caller?: ActiveKey;
  /** The request id the server gave the request, and whether a response already carries it. */
  requestId?: string;
  requestIdWritten?: boolean;
}

const contexts = new WeakMap<Request, RequestContext>();

function contextOf(request: Request): RequestContext {
  let context = contexts.get(request);
  if (!context) contexts.set(request, (context = {}));
  return context;
}

export function setCaller(request: Request, caller: ActiveKey): void {
  contextOf(request).caller = caller;
}

/** The request's key, or undefined before (or without) authentication. */
export function findCaller(request: Request): ActiveKey | undefined {
  return contexts.get(request)?.caller;
}

/** The request's caller; the gate guarantees one for every /v1 route. */
export function callerOf(request: Request): ActiveKey {
  const caller = findCaller(request);
  if (!caller) throw new Error("no authenticated caller recorded for a /v1 request");
  return caller;
}

/** Records the request's TCP peer, or a function that finds it when first asked. */
export function setPeer(request: Request, peer: Address | (() => Address | null)): void {
  contextOf(request).peer = peer;
}

/** The TCP peer of the request if it came through a socket. */
export function findPeer(request: Request): Address | undefined {
  const context = contexts.get(request);
  if (typeof context?.peer === "function") context.peer = context.peer() ?? undefined;
  return context?.peer;
}

/** The TCP peer of the request, recorded by the server; requests made in-process have none. */
export function peerOf(request: Request): Address {
  const peer = findPeer(request);
  if (!peer) throw new Error("the request has no peer address (it did not come through a socket)");
  return peer;
}

/** Records the request id the server will answer with. */
export function setRequestId(request: Request, requestId: string): void {
  contextOf(request).requestId = requestId;
}

/**
 * The request id, for a response built with it among its headers (setting a header on a
 * built Response costs more than building it with the header); undefined for requests
 * made in-process. The server then leaves that response's headers alone.
 */
export function takeRequestId(request: Request): string | undefined {
  const context = contexts.get(request);
  if (context?.requestId === undefined) return undefined;
  context.requestIdWritten = true;
  return context.requestId;
}

/** Whether a response built for this request already carries its request id. */
export function requestIdWritten(request: Request): boolean {
  return contexts.get(request)?.requestIdWritten === true;
}

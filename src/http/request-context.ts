import type { Address } from "../address/address.ts";
import type { Cidr } from "../address/cidr.ts";
import type { CorsGrant } from "../access/key-controls.ts";
import { ClientGoneError } from "../errors/client-gone.ts";
import type { ActiveKey } from "../store/store.ts";
import { clientAddress } from "./client-address.ts";

/**
 * What the layers around the app learn about one request: the server gives it its id
 * and a way to ask the socket for the TCP peer; the gate, which runs before the body is
 * parsed (earlier than any per-request context the framework offers), records the
 * matched route and the authenticated key. One object per request, kept beside it.
 */
export class RequestContext {
  /**
   * The key the request's secret belongs to: the gate sets it as soon as it has found the
   * key, before the key's own checks, its rate and the rest, so that the access log names
   * it for a request they refuse too. A handler runs only once all of them have passed.
   */
  caller: ActiveKey | undefined;
  /** The route the gate matched (its path), or undefined when none did. */
  route: string | undefined;
  /**
   * The request's token of its key's rate is taken: set when it had to wait for one (a
   * lease, see LeaseLimiter), so that the gate, run again afterwards, takes no second.
   */
  rateTaken = false;
  /** Whether the response was built with the request id among its headers. */
  requestIdWritten = false;
  /** Units the answer charged (its X-Units-Consumed), for the access log. */
  units = 0;
  /** What the answer, a refusal by the key's own checks included, may tell a browser (CORS): see checkKeyControls. */
  cors: CorsGrant = undefined;
  private peer: Address | null | undefined;
  private client: Address | null | undefined;

  /**
   * @param requestId the id the server answers with; requests made in-process have none.
   * @param askPeer finds the TCP peer: asking the socket costs, and few routes need it.
   * @param receivedAt when the server took the request (performance.now()); in-process, none.
   */
  constructor(
    readonly requestId?: string,
    private readonly askPeer?: () => Address | null,
    readonly receivedAt?: number,
  ) {}

  /**
   * The TCP peer, or null for a request that did not come through a socket, or whose
   * socket had no peer any more when first asked (Bun answers none once the client has
   * closed the connection: see clientGone).
   */
  findPeer(): Address | null {
    if (this.peer === undefined) this.peer = this.askPeer?.() ?? null;
    return this.peer;
  }

  /**
   * The client as /v1/me answers it (CONTRACT §5: X-Forwarded-For read through the
   * trusted proxies, see clientAddress), or null for a request that did not come through
   * a socket. Found once: /v1/me, a key's allowed_cidrs, the throttle of unknown keys
   * and the access log all judge the same address.
   */
  findClient(request: Request, trustProxy: readonly Cidr[]): Address | null {
    if (this.client === undefined) {
      const peer = this.findPeer();
      this.client = peer && (trustProxy.length === 0 ? peer : clientAddress(peer, request.headers.get("x-forwarded-for"), trustProxy));
    }
    return this.client;
  }

  /**
   * findClient for what acts on the client (/v1/me, the throttle of unknown keys, a key's
   * allowed_cidrs): a request whose client has gone (see clientGone) throws
   * ClientGoneError, recorded as gone (499) rather than refused or failed. Null only for
   * a request that did not come through a socket.
   */
  findLiveClient(request: Request, trustProxy: readonly Cidr[]): Address | null {
    const client = this.findClient(request, trustProxy);
    if (client === null && this.clientGone(false)) throw new ClientGoneError();
    return client;
  }

  /**
   * Whether the client is known to have gone: the request came through a socket, and the
   * socket had no peer when asked, which Bun answers only for a closed connection (it
   * knows of a reset, or of a close it has read, before it aborts the request's signal).
   * With `askSocket`, the socket is asked again now, a system call; without, only an
   * answer found before (findPeer) counts, which costs nothing.
   */
  clientGone(askSocket: boolean): boolean {
    if (this.askPeer === undefined) return false;
    if (this.peer === null) return true;
    return askSocket && this.askPeer() === null;
  }
}

/**
 * Where a request's context is kept: a property of the Request under a symbol of this
 * module's own. (A WeakMap keyed by requests cost several per cent of single-lookup
 * throughput: every short-lived entry is weak-table work for the garbage collector.)
 */
const CONTEXT = Symbol("iplookup.requestContext");

type WithContext = Request & { [CONTEXT]?: RequestContext };

/** Keeps `context` beside `request`; the server does this before the app sees it. */
export function attachContext(request: Request, context: RequestContext): void {
  (request as WithContext)[CONTEXT] = context;
}

/** The request's context; a request made in-process gets an empty one on first use. */
export function contextOf(request: Request): RequestContext {
  return ((request as WithContext)[CONTEXT] ??= new RequestContext());
}

/** The request's caller; the gate guarantees one for every /v1 route. */
export function callerOf(request: Request): ActiveKey {
  const caller = (request as WithContext)[CONTEXT]?.caller;
  if (!caller) throw new Error("no authenticated caller recorded for a /v1 request");
  return caller;
}

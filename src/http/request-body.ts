/**
 * Whether a request came with a body, answered without making its stream.
 *
 * Elysia's compiled parse step (1.4) reads `request.body` only to learn whether a body
 * was sent, and then calls the route's parser whatever it learnt: ours (readJsonBody)
 * reads the body itself. On Bun that one read makes the body's ReadableStream, which
 * costs 0.46–0.56 µs a request, 6% of a bare Bun.serve's CPU (paired runs of 15 rounds,
 * a server reading `request.body` before `request.bytes()` against one that does not),
 * and 2–3% of `serve`'s single lookups (12 pairs). So the server gives every request an
 * own `body` of null for that question, and whatever reads the body as a stream asks
 * Bun's own accessor (bodyStream); `request.bytes()` is not affected.
 */
const BODY = Object.getOwnPropertyDescriptor(Request.prototype, "body")?.get;

/** Hides the body's stream from `request.body`; read it with bodyStream. */
export function hideBodyStream(request: Request): void {
  if (BODY) Object.defineProperty(request, "body", { value: null });
}

/** The request's body as a stream, or null when it has none, whether hidden or not. */
export function bodyStream(request: Request): ReadableStream<Uint8Array> | null {
  return BODY ? (BODY.call(request) as ReadableStream<Uint8Array> | null) : request.body;
}

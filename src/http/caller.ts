import type { ActiveKey } from "../store/store.ts";

/**
 * The key each /v1 request was authenticated with. The gate runs before the body is
 * parsed (the contract checks the key first), earlier than any per-request context the
 * framework offers, so it records the caller here by request; entries go with their
 * requests.
 */
const callers = new WeakMap<Request, ActiveKey>();

export function setCaller(request: Request, caller: ActiveKey): void {
  callers.set(request, caller);
}

/** The request's caller; the gate guarantees one for every /v1 route. */
export function callerOf(request: Request): ActiveKey {
  const caller = callers.get(request);
  if (!caller) throw new Error("no authenticated caller recorded for a /v1 request");
  return caller;
}

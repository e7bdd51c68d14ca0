import type { Address } from "../address/address.ts";
import { parseCidr } from "../address/cidr.ts";
import { CidrSet } from "../address/cidr-set.ts";
import { ApiError } from "../errors/api-error.ts";
import type { ActiveKey, KeyControls } from "../store/store.ts";
import { REALM } from "./unknown-key.ts";

/**
 * How the checks learn what they need of a request (`R`): made once for an app, so
 * that checking a request allocates nothing, and each is asked only when a check needs it.
 */
export interface KeyCall<R> {
  /** The wall clock, in milliseconds since the epoch (read only for a key with a time to check). */
  now(): number;
  /** The client's address as /v1/me sees it (trusted proxies honoured), or null when unknown. */
  client(request: R): Address | null;
  /** The request's Origin header, or null (read only for a key that lists origins). */
  origin(request: R): string | null;
}

/**
 * What an answer to a request of a key may tell a browser (CORS): undefined when the key
 * lists no origins (nothing to say), null when it does but the request's Origin is not
 * one of them or there is none (the answer still varies by Origin: `Vary: Origin`,
 * nothing allowed), else the listed origin to allow.
 */
export type CorsGrant = string | null | undefined;

/** Where the checks leave a request's CorsGrant (the request's context). */
export interface CorsSink {
  cors: CorsGrant;
}

/** A key's controls made ready for the request path: times as numbers, blocks parsed, origins in a set. */
interface CompiledControls {
  readonly expiresAtMs: number | null;
  readonly cidrs: CidrSet | null;
  readonly origins: ReadonlySet<string> | null;
}

/** By the controls object, which a key cache snapshot shares among a key's secrets: compiled once per snapshot. */
const compiled = new WeakMap<KeyControls, CompiledControls>();

/**
 * The key's own checks (CONTRACT §16), in the contract's order, after the key is known
 * and before its rate: a rotated key's old secret past its grace (`invalid_key`, as any
 * secret that no longer works), then expiry (`key_expired`), the client's address
 * (`address_not_allowed`), the Origin (`origin_not_allowed`). Throws the first ApiError
 * that applies, before anything is charged or counted against the rate. Called only for
 * a key that has controls or a grace: a plain key costs the request path nothing.
 *
 * Once the secret is known good, and before any other check may refuse, the request's
 * CorsGrant is left in `into`: every answer to a key that lists origins depends on the
 * Origin, its refusals (`key_expired`, `address_not_allowed`, `origin_not_allowed`)
 * included, so each says `Vary: Origin`, and one to a listed origin allows it (a script
 * there may read why it was refused); an Origin not listed is never allowed. A dead
 * secret (`invalid_key`) is answered as an unknown one, with nothing about the key.
 */
export function checkKeyControls<R>(caller: ActiveKey, call: KeyCall<R>, request: R, into: CorsSink): void {
  if (caller.secretValidUntil !== undefined && call.now() >= caller.secretValidUntil) {
    throw new ApiError("invalid_key", "the API key was rotated, and the grace of its old secret is over", {}, {
      "www-authenticate": `${REALM}, error="invalid_token", error_description="the API key was rotated"`,
    });
  }
  const source = caller.key.controls;
  if (source === undefined) return;
  const controls = compile(source);
  const origin = controls.origins === null ? null : call.origin(request);
  const listed = origin !== null && controls.origins !== null && controls.origins.has(origin);
  into.cors = controls.origins === null ? undefined : listed ? origin : null;
  if (controls.expiresAtMs !== null && call.now() >= controls.expiresAtMs) {
    throw new ApiError("key_expired", `the API key expired at ${source.expiresAt}`, { expired_at: source.expiresAt }, {
      "www-authenticate": `${REALM}, error="invalid_token", error_description="the API key expired"`,
    });
  }
  if (controls.cidrs !== null) {
    const client = call.client(request);
    if (client === null || !controls.cidrs.has(client)) {
      throw new ApiError("address_not_allowed", `this API key is not allowed from ${client?.text ?? "an unknown address"}`);
    }
  }
  if (origin !== null && !listed) throw new ApiError("origin_not_allowed", `this API key is not allowed from the origin ${shorten(origin)}`);
}

function compile(controls: KeyControls): CompiledControls {
  let found = compiled.get(controls);
  if (!found) {
    found = {
      expiresAtMs: controls.expiresAt === null ? null : Date.parse(controls.expiresAt),
      // The store keeps only canonical blocks; one that does not parse matches nothing.
      cidrs: controls.allowedCidrs === null ? null : new CidrSet(controls.allowedCidrs.flatMap((text) => parseCidr(text) ?? [])),
      origins: controls.allowedOrigins === null ? null : new Set(controls.allowedOrigins),
    };
    compiled.set(controls, found);
  }
  return found;
}

function shorten(value: string): string {
  return value.length <= 100 ? value : `${value.slice(0, 97)}...`;
}

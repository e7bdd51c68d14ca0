import type { CorsGrant } from "../access/key-controls.ts";
import { corsHeaders } from "./cors.ts";

/** What a lookup answer's headers say beyond its type. */
export interface AnswerFacts {
  readonly dataVersion: string;
  readonly consumed: number;
  /** Units left this period, or null for a plan without a monthly quota. */
  readonly remaining: number | null;
  readonly cors: CorsGrant;
  /** The server's request id; requests made in-process have none. */
  readonly requestId: string | undefined;
}

/** One prebuilt set of headers, and what its changing entries hold now. */
interface Template {
  readonly headers: Headers;
  dataVersion: string | undefined;
  hasRemaining: boolean;
  hasRequestId: boolean;
}

/**
 * The headers of lookup answers, kept built between requests, one set for each kind of
 * CORS answer (none, `Vary` alone, an allowed origin). Building a Response from a
 * Headers object copies its entries in one step, where a plain object is walked property
 * by property: measured in a bare Bun.serve answering the same body with wrk, about
 * 0.9 µs less of the server's CPU a request (7% of that server's). Only the entries
 * that change are set for each answer; the Response takes its own copy when built, so
 * answers never share entries (JavaScript runs one request at a time on a thread).
 */
export class AnswerHeaders {
  private readonly none = template(undefined);
  private readonly varyOnly = template(null);
  private readonly allowed = template("");

  /** The headers for an answer, valid until the next call: build its Response before then. */
  for(facts: AnswerFacts): Headers {
    const cors = facts.cors;
    const chosen = cors === undefined ? this.none : cors === null ? this.varyOnly : this.allowed;
    const headers = chosen.headers;
    if (chosen.dataVersion !== facts.dataVersion) {
      headers.set("x-data-version", facts.dataVersion);
      chosen.dataVersion = facts.dataVersion;
    }
    headers.set("x-units-consumed", String(facts.consumed));
    if (facts.remaining !== null) {
      headers.set("x-units-remaining", String(facts.remaining));
      chosen.hasRemaining = true;
    } else if (chosen.hasRemaining) {
      headers.delete("x-units-remaining");
      chosen.hasRemaining = false;
    }
    if (facts.requestId !== undefined) {
      headers.set("x-request-id", facts.requestId);
      chosen.hasRequestId = true;
    } else if (chosen.hasRequestId) {
      headers.delete("x-request-id");
      chosen.hasRequestId = false;
    }
    if (typeof cors === "string") headers.set("access-control-allow-origin", cors);
    return headers;
  }
}

function template(cors: CorsGrant): Template {
  const entries: Record<string, string> = { "content-type": "application/json" };
  corsHeaders(cors, entries);
  return { headers: new Headers(entries), dataVersion: undefined, hasRemaining: false, hasRequestId: false };
}

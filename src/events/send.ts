import { signedHeaders } from "./signature.ts";

/** The most of a receiver's answer that is kept and shown (CONTRACT §16). */
export const KEPT_RESPONSE_BYTES = 256;
/** How long one attempt may take, connection to the end of the kept bytes. */
export const ATTEMPT_TIMEOUT_MS = 10_000;
/**
 * How long the kept bytes of an answer's body may take after its status and headers:
 * the status decides the attempt, and a body that comes slowly, or never ends, only
 * shortens what is kept of it.
 */
export const ANSWER_BODY_MS = 1000;

/** What one attempt to send a message came to. */
export interface SendOutcome {
  /** The HTTP status, or null when there was no answer. */
  readonly status: number | null;
  /**
   * The first KEPT_RESPONSE_BYTES of the answer's body that came within ANSWER_BODY_MS, as
   * text: at most that many bytes as UTF-8, cut before a character the limit would split
   * (invalid UTF-8 the receiver sent is replaced).
   */
  readonly response: string | null;
  /** Why there was no answer; null when there was one. */
  readonly error: string | null;
  readonly durationMs: number;
}

export interface Message {
  readonly url: string;
  readonly secret: string;
  readonly id: string;
  readonly body: string;
}

/**
 * POSTs one signed message (Standard Webhooks headers) and reads at most the first
 * KEPT_RESPONSE_BYTES of the answer: a receiver's answer is neither kept nor shown beyond
 * them, and a receiver that streams without end cannot hold the sender. Redirects are
 * not followed (a 3xx is a failed attempt, as Standard Webhooks asks). The timestamp is
 * the time of this attempt, so a receiver that refuses old timestamps accepts a retry.
 * `stop` cuts the attempt short (a server stopping).
 */
export async function sendMessage(message: Message, nowMs: number, timeoutMs = ATTEMPT_TIMEOUT_MS, stop?: AbortSignal): Promise<SendOutcome> {
  const began = performance.now();
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = stop ? AbortSignal.any([timeout, stop]) : timeout;
  const duration = () => performance.now() - began;
  try {
    const answer = await fetch(message.url, {
      method: "POST",
      redirect: "manual",
      signal,
      headers: {
        "content-type": "application/json",
        "user-agent": "iplookup-webhooks",
        ...signedHeaders(message.secret, message.id, Math.floor(nowMs / 1000), message.body),
      },
      body: message.body,
      // A connection of its own each time: a receiver that restarted leaves no dead
      // keep-alive connection for the next attempt to fail on.
      keepalive: false,
    });
    const response = await firstBytes(answer, KEPT_RESPONSE_BYTES, ANSWER_BODY_MS);
    return { status: answer.status, response, error: null, durationMs: duration() };
  } catch (error) {
    return { status: null, response: null, error: describeFailure(error, timeout, stop, timeoutMs), durationMs: duration() };
  }
}

/**
 * The first `limit` bytes of an answer's body as text, of what arrives within `waitMs`
 * (or before the attempt's signal ends it); the rest is never read. Never fails: a body
 * cut short keeps what came of it.
 */
async function firstBytes(answer: Response, limit: number, waitMs: number): Promise<string | null> {
  if (!answer.body) return null;
  const reader = answer.body.getReader();
  const parts: Uint8Array[] = [];
  let length = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<null>((resolve) => (timer = setTimeout(resolve, waitMs, null)));
  let whole = false;
  try {
    while (length < limit) {
      const chunk = await Promise.race([reader.read(), late]);
      if (chunk === null) break;
      if (chunk.done) {
        whole = true;
        break;
      }
      parts.push(chunk.value);
      length += chunk.value.byteLength;
    }
  } catch {
    // The body broke off, or the attempt's time ran out: what came is what is kept.
  } finally {
    clearTimeout(timer);
    void reader.cancel().catch(() => {});
  }
  const bytes = new Uint8Array(Math.min(length, limit));
  let at = 0;
  for (const part of parts) {
    const take = Math.min(part.byteLength, bytes.byteLength - at);
    bytes.set(part.subarray(0, take), at);
    at += take;
    if (at === bytes.byteLength) break;
  }
  return new TextDecoder("utf-8", { fatal: false }).decode(whole ? bytes : bytes.subarray(0, wholeCharacters(bytes)));
}

/**
 * How many of `bytes`, the start of a longer text, end at a character's end: all of them
 * but an incomplete UTF-8 sequence at the end, which the cut made (decoded, it would be a
 * U+FFFD the receiver never sent). Bytes that are no UTF-8 at all are left as they are.
 */
export function wholeCharacters(bytes: Uint8Array): number {
  // The last sequence starts at most 3 bytes before the end (4 bytes at most, RFC 3629).
  for (let start = bytes.length - 1; start >= Math.max(0, bytes.length - 4); start--) {
    const byte = bytes[start] as number;
    if ((byte & 0xc0) === 0x80) continue; // a continuation byte: the start is further back
    const needs = byte < 0xc0 || byte >= 0xf8 ? 1 : byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : 2;
    return bytes.length - start < needs ? start : bytes.length;
  }
  return bytes.length;
}

/**
 * Why an attempt got no answer, in a few words; never the URL (it may carry a token in
 * its path or query) nor anything of the request.
 */
function describeFailure(error: unknown, timeout: AbortSignal, stop: AbortSignal | undefined, timeoutMs: number): string {
  if (timeout.aborted) return `no answer within ${timeoutMs / 1000} s`;
  if (stop?.aborted) return "the sender stopped";
  const code = (error as { code?: unknown })?.code;
  switch (code) {
    case "ConnectionRefused":
    case "ECONNREFUSED":
      return "connection refused";
    case "ConnectionClosed":
    case "ECONNRESET":
      return "connection closed before an answer";
    case "FailedToOpenSocket":
      return "cannot connect";
    case "ENOTFOUND":
    case "DNSException":
      return "the host name does not resolve";
    default:
      break;
  }
  const name = (error as Error)?.name ?? "Error";
  return typeof code === "string" ? `${name} (${code})` : "the request failed";
}

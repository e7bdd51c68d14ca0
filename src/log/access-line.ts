/** What the access log says of one answered request. */
export interface AccessEntry {
  readonly requestId: string;
  readonly method: string;
  readonly route: string;
  readonly status: number;
  readonly keyId: string | null;
  readonly units: number;
  readonly durationMs: number;
  readonly peer: string | null;
  /**
   * The client as /v1/me finds it (X-Forwarded-For through the trusted proxies): only on
   * a server given --trust-proxy, where it may differ from the peer; left out otherwise.
   */
  readonly client?: string | null;
}

/** Methods written as they are; any other is written through JSON.stringify. */
const PLAIN_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"]);

/**
 * One access-log line, the JSON object `{time, level, msg, request_id, method, route,
 * status, key_id, units, duration_ms, peer}` (and `client` when the entry has one), built as text: every value but the
 * method is known to need no escaping (request ids are checked against a character
 * class of letters, digits and `._:-` before use, routes are the app's own patterns or
 * "other", key ids are `key_` and base32, peers and clients are address text), and the method is
 * escaped unless it is a common one. A test holds this equal to JSON.stringify of the
 * same object; building it this way costs a fraction of stringifying one.
 */
export function accessLine(time: string, entry: AccessEntry): string {
  const method = PLAIN_METHODS.has(entry.method) ? `"${entry.method}"` : JSON.stringify(entry.method);
  const keyId = entry.keyId === null ? "null" : `"${entry.keyId}"`;
  const peer = entry.peer === null ? "null" : `"${entry.peer}"`;
  const client = entry.client === undefined ? "" : entry.client === null ? ',"client":null' : `,"client":"${entry.client}"`;
  return `{"time":"${time}","level":"info","msg":"request","request_id":"${entry.requestId}","method":${method},"route":"${entry.route}","status":${entry.status},"key_id":${keyId},"units":${entry.units},"duration_ms":${durationText(entry.durationMs)},"peer":${peer}${client}}`;
}

/** Durations under 100 ms whose text is kept, by hundredths of a millisecond. */
const KEPT_DURATIONS = 10_000;
const durationTexts: (string | undefined)[] = new Array<string | undefined>(KEPT_DURATIONS).fill(undefined);

/**
 * A duration's text as JSON writes it. Writing a fraction is the costliest part of a
 * line (about 100 of 280 ns, in process), and a server's durations are few distinct
 * values (hundredths of a millisecond, mostly under one): each is written once and kept.
 * A duration that is not a whole number of hundredths, or is 100 ms or more, is written
 * every time.
 */
export function durationText(ms: number): string {
  const hundredths = Math.round(ms * 100);
  if (hundredths >= 0 && hundredths < KEPT_DURATIONS && hundredths / 100 === ms) return (durationTexts[hundredths] ??= String(ms));
  return String(ms);
}

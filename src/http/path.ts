/**
 * The path every decision about a request is made on: the gate (API key or admin token),
 * the router, the access log and the metrics. It is the router's own rule, character for
 * character (Elysia's, with `standardHostname: false`): from the first "/" at or after
 * the URL's eighth character (past "http://") up to the first "?" after it. Because the
 * gate applies the same rule to the same string, no request-target can be one path to
 * the gate and another to the router.
 *
 * The rule finds the path only in an absolute http URL, so the servers hand the apps no
 * other (see requestForApp): Bun gives a request without a usable Host header its
 * request-target as it came, `/v1/lookup/batch`, where the rule would start at the
 * "/" of "/batch".
 */
export function pathOf(url: string): string {
  const start = url.indexOf("/", 7);
  const query = url.indexOf("?", start + 1);
  // substring, as the router does: a start of -1 counts as 0.
  return url.substring(start, query === -1 ? undefined : query);
}

/** The host an app's URL carries when the request had none it could use. */
const NO_HOST = "http://localhost";

/**
 * The request as the apps see it: its URL absolute and http, whatever the request-target
 * and Host header were. An https URL becomes http (the path then starts where pathOf
 * looks for it); an origin-form target that Bun left relative, because the Host header
 * was missing (HTTP/1.0), empty or malformed, is put under `http://localhost`. The body
 * is passed on, not read.
 */
export function requestForApp(received: Request): Request {
  const url = received.url;
  if (url.startsWith("http://")) return received;
  if (url.startsWith("https://")) return new Request(`http://${url.slice(8)}`, received);
  return new Request(`${NO_HOST}${url.startsWith("/") ? "" : "/"}${url}`, received);
}

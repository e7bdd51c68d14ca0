/**
 * Every route pattern the public app answers. The metrics count requests by these names
 * (anything else is "other"), laid out the same in every thread; a test checks that the
 * app's own routes are exactly these.
 */
export const PUBLIC_ROUTES = [
  "/healthz",
  "/readyz",
  "/metrics",
  "/openapi.json",
  "/docs",
  "/v1/lookup",
  "/v1/lookup/batch",
  "/v1/me",
  "/v1/usage",
  "/v1/asn/:asn",
  "/v1/asn",
] as const;

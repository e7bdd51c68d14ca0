import { METHOD_NOT_ALLOWED, NOT_FOUND_RESPONSE, HEADERS, ProblemSchema, errorResponses, headerRef, jsonOf as json, plain } from "./openapi-parts.ts";
import { AsnResultSchema, AsnSummarySchema, BatchRequest, BatchResultSchema, LookupRequest, LookupResultSchema, MeSchema, UsageSchema } from "./schemas.ts";

/** The headers of a lookup's answer (CONTRACT §4). */
const lookupHeaders = {
  "X-Units-Consumed": headerRef("X-Units-Consumed"),
  "X-Units-Remaining": headerRef("X-Units-Remaining"),
  "X-Data-Version": headerRef("X-Data-Version"),
  "X-Request-Id": headerRef("X-Request-Id"),
};
const requestId = { "X-Request-Id": headerRef("X-Request-Id") };

/**
 * The errors of each kind of route, exactly: every /v1 route checks the key and the rate
 * and may find the state store unreachable; only the lookups read a body, and only they
 * charge units, so only they answer quota_exceeded.
 */
const keyErrors = [
  "missing_key",
  "invalid_key",
  "key_expired",
  "address_not_allowed",
  "origin_not_allowed",
  "method_not_allowed",
  "rate_limited",
  "internal_error",
  "store_unavailable",
] as const;
/** The AS routes (CONTRACT §14) read no body; they check the AS number or the search text, then charge. */
const asnErrors = [...keyErrors, "invalid_asn", "asn_not_public", "quota_exceeded"] as const;
const asnSearchErrors = [...keyErrors, "invalid_request", "quota_exceeded"] as const;
const lookupErrors = [...keyErrors, "invalid_json", "invalid_request", "invalid_address", "address_not_public", "payload_too_large", "unsupported_media_type", "quota_exceeded"] as const;

const text = (type: string) => ({ [type]: { schema: { type: "string" } } });

/** The OpenAPI 3.1 document of the API, built from the same TypeBox schemas Elysia validates with. */
export function openApiDocument(version: string) {
  return {
    openapi: "3.1.0",
    info: {
      title: "iplookup",
      version,
      description:
        "Network information (AS number and name, country, network) for public IPv4 and IPv6 addresses. Every /v1 request needs an API key; lookups cost one unit per address. Every answer carries X-Request-Id; every GET path also answers HEAD; a path not in this document answers 404 not_found (components.responses.NotFound). A key may carry controls (set by the operator): an expiry (401 key_expired), allowed client addresses (403 address_not_allowed) and allowed browser origins (403 origin_not_allowed), checked in that order after the key and before the rate, never charged. A request from an allowed Origin gets Access-Control-Allow-Origin for it and Access-Control-Expose-Headers (X-Units-Consumed, X-Units-Remaining, X-Data-Version, X-Request-Id, Retry-After), refusals included; every answer to a key with allowed origins, whatever the Origin and refusals included, says Vary: Origin; a CORS preflight (OPTIONS) on a /v1 route answers 204 without a key, charging nothing.",
    },
    servers: [{ url: "/" }],
    security: [{ bearer: [] }],
    paths: {
      "/v1/lookup": {
        post: {
          summary: "Look up one address",
          description: "Costs one unit.",
          requestBody: { required: true, content: json("LookupRequest") },
          responses: { "200": { description: "One LookupResult; 1 unit", headers: lookupHeaders, content: json("LookupResult") }, ...errorResponses(...lookupErrors) },
        },
      },
      "/v1/lookup/batch": {
        post: {
          summary: "Look up several addresses",
          description: "Results keep the order and length of `ips`, duplicates repeated; one unit per entry. Any bad entry rejects the whole request, listing every bad entry.",
          requestBody: { required: true, content: json("BatchRequest") },
          responses: {
            "200": { description: "Results in input order; one unit per entry", headers: lookupHeaders, content: json("BatchResult") },
            ...errorResponses(...lookupErrors, "batch_too_large"),
          },
        },
      },
      "/v1/asn/{asn}": {
        get: {
          summary: "An autonomous system: its name, country and prefixes",
          description:
            "Costs one unit, found or not. `prefixes` and `prefixes6` are the fewest CIDR blocks covering exactly the addresses whose lookup answers this AS, in address order; `num_ips` counts their IPv4 addresses; the country is that of most of its IPv4 addresses (IPv6 when none has one). An AS number of the IANA special-purpose registry (0, 23456, 64496–131071, 4200000000–4294967295) is refused with asn_not_public and its `reason`, at no cost.",
          parameters: [
            {
              name: "asn",
              in: "path",
              required: true,
              description: "The AS number in decimal (0–4294967295, no sign, no leading zeros), alone or after AS in any case: 13335 or AS13335",
              schema: { type: "string", pattern: "^([Aa][Ss])?(0|[1-9][0-9]{0,9})$" },
              examples: { number: { value: "13335" }, prefixed: { value: "AS13335" } },
            },
          ],
          responses: { "200": { description: "One AsnResult; 1 unit", headers: lookupHeaders, content: json("AsnResult") }, ...errorResponses(...asnErrors) },
        },
      },
      "/v1/asn": {
        get: {
          summary: "Search ASes by name or number",
          description:
            "At most 50 ASes whose name contains `q` (any case) or whose number starts with it (AS allowed before the digits), most IPv4 addresses first (then most IPv6 addresses, then the lower number). Special-purpose AS numbers are left out. Costs one unit, whatever it finds.",
          parameters: [
            {
              name: "q",
              in: "query",
              required: true,
              description: "1 to 64 characters, percent-encoded as UTF-8 (a value that is not valid percent-encoding, such as %zz or a cut sequence such as %E2%82, is 400 invalid_request, no unit)",
              schema: { type: "string", minLength: 1, maxLength: 64 },
              examples: { name: { value: "cloudflare" }, number: { value: "AS1333" } },
            },
          ],
          responses: { "200": { description: "The ASes found; 1 unit", headers: lookupHeaders, content: json("AsnSearch") }, ...errorResponses(...asnSearchErrors) },
        },
      },
      "/v1/me": { get: { summary: "The caller's connection address", responses: { "200": { description: "No units", headers: requestId, content: json("Me") }, ...errorResponses(...keyErrors) } } },
      "/v1/usage": { get: { summary: "The key's plan, period and units", responses: { "200": { description: "No units", headers: requestId, content: json("Usage") }, ...errorResponses(...keyErrors) } } },
      "/healthz": { get: { security: [], summary: "The process is alive", responses: { "200": { description: "ok", headers: requestId, content: json("Health") }, ...METHOD_NOT_ALLOWED() } } },
      "/readyz": {
        get: {
          security: [],
          summary: "The data is loaded (and the state store reachable)",
          responses: {
            "200": { description: "ready", headers: requestId, content: json("Ready") },
            "503": { description: "not ready: the data is not loaded, or the state store cannot be reached", headers: requestId, content: json("NotReady") },
            ...METHOD_NOT_ALLOWED(),
          },
        },
      },
      "/metrics": { get: { security: [], summary: "Prometheus metrics", responses: { "200": { description: "Prometheus text format 0.0.4", headers: requestId, content: text("text/plain") }, ...METHOD_NOT_ALLOWED() } } },
      "/openapi.json": { get: { security: [], summary: "This document", responses: { "200": { description: "OpenAPI 3.1", headers: requestId, content: { "application/json": { schema: { type: "object" } } } }, ...METHOD_NOT_ALLOWED() } } },
      "/docs": { get: { security: [], summary: "This document as an HTML page that needs no internet access", responses: { "200": { description: "An HTML page", headers: requestId, content: text("text/html") }, ...METHOD_NOT_ALLOWED() } } },
    },
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "An API key, `ipl_…`" } },
      headers: HEADERS,
      responses: { NotFound: NOT_FOUND_RESPONSE },
      schemas: {
        LookupRequest: plain(LookupRequest),
        BatchRequest: plain(BatchRequest),
        LookupResult: plain(LookupResultSchema),
        BatchResult: plain(BatchResultSchema),
        AsnResult: plain(AsnResultSchema),
        AsnSummary: plain(AsnSummarySchema),
        AsnSearch: { type: "object", required: ["results"], properties: { results: { type: "array", maxItems: 50, items: { $ref: "#/components/schemas/AsnSummary" } } } },
        Me: plain(MeSchema),
        Usage: plain(UsageSchema),
        Health: { type: "object", required: ["status"], properties: { status: { const: "ok" } } },
        Ready: {
          type: "object",
          required: ["status", "data_version", "data_built_at"],
          properties: { status: { const: "ready" }, data_version: { type: "string" }, data_built_at: { type: "string", format: "date-time" } },
        },
        NotReady: {
          type: "object",
          required: ["status", "reason"],
          properties: { status: { const: "unavailable" }, reason: { type: "string" } },
        },
        Problem: ProblemSchema,
      },
    },
  };
}

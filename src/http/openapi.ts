import { ERROR_STATUS } from "../errors/api-error.ts";
import { BatchRequest, BatchResultSchema, LookupRequest, LookupResultSchema, MeSchema, UsageSchema } from "./schemas.ts";

/** TypeBox schemas are JSON Schema; strip TypeBox's symbol keys by a JSON round trip. */
const plain = (schema: unknown) => JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;

const Problem = {
  type: "object",
  required: ["type", "title", "status", "code", "detail"],
  properties: {
    type: { type: "string", example: "about:blank" },
    title: { type: "string" },
    status: { type: "integer" },
    code: { type: "string", enum: Object.keys(ERROR_STATUS) },
    detail: { type: "string" },
    errors: {
      type: "array",
      description: "Every bad entry of the request (invalid_address, address_not_public)",
      items: {
        type: "object",
        required: ["index", "value", "code"],
        properties: { index: { type: "integer" }, value: { type: "string" }, code: { type: "string" }, reason: { type: "string" } },
      },
    },
    max_batch_size: { type: "integer", description: "With batch_too_large" },
  },
};

function problems(...statuses: number[]) {
  return Object.fromEntries(
    statuses.map((status) => [
      String(status),
      {
        description: Object.entries(ERROR_STATUS)
          .filter(([, s]) => s === status)
          .map(([code]) => code)
          .join(", "),
        content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } },
      },
    ]),
  );
}

const unitHeaders = {
  "X-Units-Consumed": { description: "Units this request cost", schema: { type: "integer" } },
  "X-Units-Remaining": { description: "Units left this period (plans with a unit limit only)", schema: { type: "integer" } },
};

const json = (ref: string) => ({ "application/json": { schema: { $ref: `#/components/schemas/${ref}` } } });

/** The OpenAPI 3.1 document of the API, built from the same TypeBox schemas Elysia validates with. */
export function openApiDocument(version: string) {
  const v1Errors = problems(401, 429, 500);
  return {
    openapi: "3.1.0",
    info: {
      title: "iplookup",
      version,
      description:
        "Network information (AS number and name, country, network) for public IPv4 and IPv6 addresses. Every /v1 request needs an API key; lookups cost one unit per address.",
    },
    servers: [{ url: "/" }],
    security: [{ bearer: [] }],
    paths: {
      "/v1/lookup": {
        post: {
          summary: "Look up one address",
          requestBody: { required: true, content: json("LookupRequest") },
          responses: { "200": { description: "One LookupResult; 1 unit", headers: unitHeaders, content: json("LookupResult") }, ...problems(400, 413, 415), ...v1Errors },
        },
      },
      "/v1/lookup/batch": {
        post: {
          summary: "Look up several addresses",
          description: "Results keep the order and length of `ips`, duplicates repeated; one unit per entry. Any bad entry rejects the whole request, listing every bad entry.",
          requestBody: { required: true, content: json("BatchRequest") },
          responses: { "200": { description: "Results in input order", headers: unitHeaders, content: json("BatchResult") }, ...problems(400, 413, 415), ...v1Errors },
        },
      },
      "/v1/me": { get: { summary: "The caller's connection address", responses: { "200": { description: "No units", content: json("Me") }, ...v1Errors } } },
      "/v1/usage": { get: { summary: "The key's plan, period and units", responses: { "200": { description: "No units", content: json("Usage") }, ...v1Errors } } },
      "/healthz": { get: { security: [], summary: "The process is alive", responses: { "200": { description: "ok" } } } },
      "/readyz": { get: { security: [], summary: "The data is loaded", responses: { "200": { description: "ready" } } } },
      "/metrics": { get: { security: [], summary: "Prometheus metrics", responses: { "200": { description: "text/plain; version=0.0.4" } } } },
      "/openapi.json": { get: { security: [], summary: "This document", responses: { "200": { description: "OpenAPI 3.1" } } } },
      "/docs": { get: { security: [], summary: "This document as an HTML page that needs no internet access", responses: { "200": { description: "text/html" } } } },
    },
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "An API key, `ipl_…`" } },
      schemas: {
        LookupRequest: plain(LookupRequest),
        BatchRequest: plain(BatchRequest),
        LookupResult: plain(LookupResultSchema),
        BatchResult: plain(BatchResultSchema),
        Me: plain(MeSchema),
        Usage: plain(UsageSchema),
        Problem,
      },
    },
  };
}

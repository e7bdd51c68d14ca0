import { HEADERS, METHOD_NOT_ALLOWED, NOT_FOUND_RESPONSE, ProblemSchema, errorResponses, headerRef, jsonOf as json, plain } from "../http/openapi-parts.ts";
import {
  AdminKey,
  AdminKeyList,
  AdminPlan,
  AdminPlanList,
  AdminStatus,
  AdminUsage,
  CreateKeyRequest,
  IssuedKey,
  KeyId,
  PlanName,
  PutPlanRequest,
  SetKeyPlanRequest,
  UsageQuery,
} from "./admin-schemas.ts";

const requestId = { "X-Request-Id": headerRef("X-Request-Id") };
/** Every admin API request: the admin token, and a store that may be unreachable. */
const tokenErrors = ["missing_key", "invalid_key", "method_not_allowed", "internal_error", "store_unavailable"] as const;
const bodyErrors = ["invalid_json", "invalid_request", "payload_too_large", "unsupported_media_type"] as const;
const ok = (description: string, schema: string, status = "200") => ({ [status]: { description, headers: requestId, content: json(schema) } });
const keyIdParameter = { name: "id", in: "path", required: true, schema: plain(KeyId) };
const query = plain(UsageQuery) as { properties: Record<string, Record<string, unknown>> };

/**
 * The OpenAPI 3.1 document of the admin API (CONTRACT §10), served by the admin listener
 * at /admin/openapi.json, built from the TypeBox schemas the admin app validates with.
 */
export function adminOpenApiDocument(version: string) {
  return {
    openapi: "3.1.0",
    info: {
      title: "iplookup admin API",
      version,
      description:
        "Keys, plans, usage and status of an iplookup server, on its admin listener (serve --admin-host, --admin-port; 127.0.0.1:8081 by default). Every /admin/v1 request needs an admin token (iplookup admin create), never an API key. Admin requests cost no units. Changes reach every server within a second, new keys at once. Every answer carries X-Request-Id; a path not in this document answers 404 not_found.",
    },
    servers: [{ url: "/" }],
    security: [{ adminToken: [] }],
    paths: {
      "/admin/v1/keys": {
        get: {
          summary: "Every key, revoked ones included, oldest first, with its units this period and its last use",
          responses: { ...ok("The keys", "AdminKeyList"), ...errorResponses(...tokenErrors) },
        },
        post: {
          summary: "Create a key",
          description: "The answer holds the key's secret, shown only this once.",
          requestBody: { required: true, content: json("CreateKeyRequest") },
          responses: { ...ok("The new key, with its secret", "IssuedKey", "201"), ...errorResponses(...tokenErrors, ...bodyErrors, "not_found") },
        },
      },
      "/admin/v1/keys/{id}/rotate": {
        post: {
          summary: "Give an active key a new secret",
          description: "The old secret stops working within a second; the answer holds the new one, shown only this once. A request body is ignored.",
          parameters: [keyIdParameter],
          responses: { ...ok("The key with its new secret", "IssuedKey"), ...errorResponses(...tokenErrors, "not_found", "invalid_request") },
        },
      },
      "/admin/v1/keys/{id}/revoke": {
        post: {
          summary: "Revoke a key",
          description: "Refused by every server within a second. Revoking a revoked key changes nothing and answers it as it is. A request body is ignored.",
          parameters: [keyIdParameter],
          responses: { ...ok("The key, revoked_at set", "AdminKey"), ...errorResponses(...tokenErrors, "not_found") },
        },
      },
      "/admin/v1/keys/{id}": {
        patch: {
          summary: "Move an active key to another plan",
          description: "Its secret, id and usage stay. An unknown plan is not_found; a revoked key is invalid_request.",
          parameters: [keyIdParameter],
          requestBody: { required: true, content: json("SetKeyPlanRequest") },
          responses: { ...ok("The key", "AdminKey"), ...errorResponses(...tokenErrors, ...bodyErrors, "not_found") },
        },
      },
      "/admin/v1/plans": {
        get: { summary: "Every plan, by name", responses: { ...ok("The plans", "AdminPlanList"), ...errorResponses(...tokenErrors) } },
      },
      "/admin/v1/plans/{name}": {
        put: {
          summary: "Create a plan, or set all of its values",
          parameters: [{ name: "name", in: "path", required: true, schema: plain(PlanName) }],
          requestBody: { required: true, content: json("PutPlanRequest") },
          responses: { ...ok("The plan", "AdminPlan"), ...errorResponses(...tokenErrors, ...bodyErrors) },
        },
      },
      "/admin/v1/usage": {
        get: {
          summary: "Units and requests per UTC day, and the keys with the most use",
          description: "Lookups answered 200 and their units, per UTC day. At most 400 days at once.",
          parameters: Object.entries(query.properties).map(([name, schema]) => ({ name, in: "query", required: false, schema })),
          responses: { ...ok("Every day of the span, and the keys with use in it", "AdminUsage"), ...errorResponses(...tokenErrors, "invalid_request", "not_found") },
        },
      },
      "/admin/v1/status": {
        get: { summary: "The server and its data set", responses: { ...ok("Version, uptime, workers, data set", "AdminStatus"), ...errorResponses(...tokenErrors) } },
      },
      "/admin/openapi.json": {
        get: {
          security: [],
          summary: "This document",
          responses: { "200": { description: "OpenAPI 3.1", headers: requestId, content: { "application/json": { schema: { type: "object" } } } }, ...METHOD_NOT_ALLOWED() },
        },
      },
      "/console": {
        get: {
          security: [],
          summary: "The operator console: one HTML page (its script, style and icon under /console/)",
          description: "Open it as /console#token=ADMIN_TOKEN (a fragment is never sent) or sign in on the page.",
          responses: { "200": { description: "An HTML page", headers: requestId, content: { "text/html": { schema: { type: "string" } } } }, ...METHOD_NOT_ALLOWED() },
        },
      },
    },
    components: {
      securitySchemes: { adminToken: { type: "http", scheme: "bearer", description: "An admin token, `ipla_…` (iplookup admin create); an API key is refused" } },
      headers: { "X-Request-Id": HEADERS["X-Request-Id"], "WWW-Authenticate": HEADERS["WWW-Authenticate"], Allow: HEADERS.Allow, "Retry-After": HEADERS["Retry-After"] },
      responses: { NotFound: NOT_FOUND_RESPONSE },
      schemas: {
        AdminKey: plain(AdminKey),
        AdminKeyList: plain(AdminKeyList),
        IssuedKey: plain(IssuedKey),
        CreateKeyRequest: plain(CreateKeyRequest),
        SetKeyPlanRequest: plain(SetKeyPlanRequest),
        AdminPlan: plain(AdminPlan),
        AdminPlanList: plain(AdminPlanList),
        PutPlanRequest: plain(PutPlanRequest),
        AdminUsage: plain(AdminUsage),
        AdminStatus: plain(AdminStatus),
        Problem: ProblemSchema,
      },
    },
  };
}

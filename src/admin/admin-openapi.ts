import { HEADERS, METHOD_NOT_ALLOWED, NOT_FOUND_RESPONSE, ProblemSchema, errorResponses, headerRef, jsonOf as json, plain } from "../http/openapi-parts.ts";
import {
  AdminKey,
  AdminKeyList,
  AdminPlan,
  AdminPlanList,
  AdminCorrection,
  AdminCorrectionList,
  AdminStatus,
  AdminTokenInfo,
  AdminUsage,
  CorrectionCidr,
  PutCorrectionRequest,
  AuditList,
  AuditQuery,
  CreateKeyRequest,
  RevokeKeyRequest,
  RotateKeyRequest,
  IssuedKey,
  KeyId,
  PlanName,
  PutPlanRequest,
  SetKeyPlanRequest,
  UsageQuery,
} from "./admin-schemas.ts";
import { AdminDeliveryList, AdminWebhook, AdminWebhookList, CreateWebhookRequest, IssuedWebhook, TestWebhookRequest, WebhookId, WebhookTestResult } from "./webhook-schemas.ts";

import { AsnResultSchema, AsnSummarySchema } from "../http/schemas.ts";

const requestId = { "X-Request-Id": headerRef("X-Request-Id") };
/** Every admin API request: the admin token, and a store that may be unreachable. */
const tokenErrors = ["missing_key", "invalid_key", "method_not_allowed", "internal_error", "store_unavailable"] as const;
/** Every change: a read-only token may not make it. */
const writeErrors = [...tokenErrors, "read_only_token"] as const;
const bodyErrors = ["invalid_json", "invalid_request", "payload_too_large", "unsupported_media_type"] as const;
const ok = (description: string, schema: string, status = "200") => ({ [status]: { description, headers: requestId, content: json(schema) } });
const keyIdParameter = { name: "id", in: "path", required: true, schema: plain(KeyId) };
const cidrParameter = { name: "cidr", in: "path", required: true, schema: plain(CorrectionCidr) };
const webhookIdParameter = { name: "id", in: "path", required: true, schema: plain(WebhookId) };
const query = plain(UsageQuery) as { properties: Record<string, Record<string, unknown>> };
const auditQuery = plain(AuditQuery) as { properties: Record<string, Record<string, unknown>> };

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
        "Keys, plans, usage, local corrections, webhooks, the audit log and status of an iplookup server, on its admin listener (serve --admin-host, --admin-port; 127.0.0.1:8081 by default). Every /admin/v1 request needs an admin token (iplookup admin create), never an API key; a read-only token (admin create --read-only) may only read (GET, HEAD), and any other method answers 403 read_only_token. Admin requests cost no units. Changes reach every server within a second, new keys at once, and each is recorded in the audit log with the admin token's id. Every answer carries X-Request-Id and X-Content-Type-Options: nosniff; a path not in this document answers 404 not_found.",
    },
    servers: [{ url: "/" }],
    security: [{ adminToken: [] }],
    paths: {
      "/admin/v1/keys": {
        get: {
          summary: "Every key, revoked ones included, oldest first, with its units this period and its last use",
          responses: { ...ok("The keys", "AdminKeyList"), ...errorResponses(...tokenErrors, "invalid_request") },
        },
        post: {
          summary: "Create a key",
          description: "The answer holds the key's secret, shown only this once. Its controls (expires_at, allowed_cidrs, allowed_origins, metadata) may be set now or later (PATCH).",
          requestBody: { required: true, content: json("CreateKeyRequest") },
          responses: { ...ok("The new key, with its secret", "IssuedKey", "201"), ...errorResponses(...writeErrors, ...bodyErrors, "not_found") },
        },
      },
      "/admin/v1/keys/{id}/rotate": {
        post: {
          summary: "Give an active key a new secret",
          description:
            'The new secret works at once; the answer holds it, shown only this once. The old secret stops working within a second, or, with a body {"grace": "24h"}, when that grace ends (grace_until in the answer). The body may be left out.',
          parameters: [keyIdParameter],
          requestBody: { required: false, content: json("RotateKeyRequest") },
          responses: { ...ok("The key with its new secret", "IssuedKey"), ...errorResponses(...writeErrors, ...bodyErrors, "not_found") },
        },
      },
      "/admin/v1/keys/{id}/revoke": {
        post: {
          summary: "Revoke a key",
          description: "Refused by every server within a second. Revoking a revoked key changes nothing and answers it as it is. The body may be left out; one that is sent is {}.",
          parameters: [keyIdParameter],
          requestBody: { required: false, content: json("RevokeKeyRequest") },
          responses: { ...ok("The key, revoked_at set", "AdminKey"), ...errorResponses(...writeErrors, ...bodyErrors, "not_found") },
        },
      },
      "/admin/v1/keys/{id}": {
        patch: {
          summary: "Change an active key's plan and controls",
          description:
            "What the body gives changes, in one step; what it leaves out stays; null (or an empty list or object) removes a control. Its secret, id and usage stay. An unknown plan is not_found; a revoked key, or a bad value (an expires_at not in the future, a block or origin that does not parse, metadata over 1 KiB), is invalid_request. Every server applies the change within a second.",
          parameters: [keyIdParameter],
          requestBody: { required: true, content: json("SetKeyPlanRequest") },
          responses: { ...ok("The key", "AdminKey"), ...errorResponses(...writeErrors, ...bodyErrors, "not_found") },
        },
      },
      "/admin/v1/plans": {
        get: { summary: "Every plan, by name", responses: { ...ok("The plans", "AdminPlanList"), ...errorResponses(...tokenErrors, "invalid_request") } },
      },
      "/admin/v1/plans/{name}": {
        put: {
          summary: "Create a plan, or set all of its values",
          parameters: [{ name: "name", in: "path", required: true, schema: plain(PlanName) }],
          requestBody: { required: true, content: json("PutPlanRequest") },
          responses: { ...ok("The plan", "AdminPlan"), ...errorResponses(...writeErrors, ...bodyErrors) },
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
      "/admin/v1/audit": {
        get: {
          summary: "The audit log: every change made through the admin API, the console or the CLI, newest first",
          description: "Keys, plans and admin tokens (and what later features add), with the time, the actor (an admin token's id, or cli), the action, the target and what changed; never a secret. At most 400 days at once, and at most `limit` entries an answer: when the span holds more, `next` is not null, and the same query with `before` set to it answers the older ones (until `next` is null).",
          parameters: Object.entries(auditQuery.properties).map(([name, schema]) => ({ name, in: "query", required: false, schema })),
          responses: { ...ok("The entries of the span (of the page), newest first, and the next page's cursor", "AuditList"), ...errorResponses(...tokenErrors, "invalid_request") },
        },
      },
      "/admin/v1/token": {
        get: { summary: "The admin token of this request: its id, name and whether it is read-only", responses: { ...ok("The token (never its secret)", "AdminTokenInfo"), ...errorResponses(...tokenErrors, "invalid_request") } },
      },
      "/admin/v1/status": {
        get: { summary: "The server and its data set", responses: { ...ok("Version, uptime, workers, data set", "AdminStatus"), ...errorResponses(...tokenErrors, "invalid_request") } },
      },
      "/admin/v1/corrections": {
        get: {
          summary: "Every local correction",
          description: "Corrections override what the data says about a block, for every lookup in it (CONTRACT §15).",
          responses: { ...ok("The corrections", "AdminCorrectionList"), ...errorResponses(...tokenErrors, "invalid_request") },
        },
      },
      "/admin/v1/corrections/{cidr}": {
        put: {
          summary: "Set a block's local correction",
          description:
            "Every lookup of an address in the block answers the fields named instead of the data's, on every server sharing the state within a second. Where blocks nest, each field (and each privacy signal) comes from the most specific block naming it; `country` and `continent` follow `country_code`; a lookup's `network` never crosses a correction's edge. Setting a block again replaces its correction whole. A block with host bits set (192.0.2.1_24), a country code that is no country, control characters, or a body naming no field: 400 invalid_request, nothing written.",
          parameters: [cidrParameter],
          requestBody: { required: true, content: json("PutCorrectionRequest") },
          responses: { ...ok("The correction", "AdminCorrection"), ...errorResponses(...writeErrors, ...bodyErrors) },
        },
        delete: {
          summary: "Remove a block's local correction",
          description: "Lookups answer what the data says again, on every server within a second. A block without a correction: 404 not_found.",
          parameters: [cidrParameter],
          responses: { ...ok("The correction removed", "AdminCorrection"), ...errorResponses(...writeErrors, "invalid_request", "not_found") },
        },
      },
      "/admin/v1/asn/{asn}": {
        get: {
          summary: "An autonomous system, as GET /v1/asn/{asn} answers it, at no cost",
          description: "For the console's AS lookup. The same answer as the public API's, from the same data; admin requests charge no units.",
          parameters: [{ name: "asn", in: "path", required: true, description: "13335 or AS13335", schema: { type: "string", pattern: "^([Aa][Ss])?(0|[1-9][0-9]{0,9})$" } }],
          responses: { ...ok("One AsnResult", "AsnResult"), ...errorResponses(...tokenErrors, "invalid_asn", "asn_not_public", "not_found") },
        },
      },
      "/admin/v1/asn": {
        get: {
          summary: "Search ASes by name or number, as GET /v1/asn?q= answers it, at no cost",
          parameters: [{ name: "q", in: "query", required: true, description: "1 to 64 characters", schema: { type: "string", minLength: 1, maxLength: 64 } }],
          responses: { ...ok("The ASes found", "AsnSearch"), ...errorResponses(...tokenErrors, "invalid_request", "not_found") },
        },
      },
      "/admin/v1/webhooks": {
        get: { summary: "Every webhook, oldest first (never its secret)", responses: { ...ok("The webhooks", "AdminWebhookList"), ...errorResponses(...tokenErrors, "invalid_request") } },
        post: {
          summary: "Register a webhook",
          description:
            "Events: usage.threshold, key.created, key.rotated, key.revoked, key.expiring, data.updated, data.update_failed. Deliveries are POSTed as JSON and signed as Standard Webhooks does (webhook-id, webhook-timestamp, webhook-signature: v1,<base64 HMAC-SHA256 of id.timestamp.body>), retried with exponential backoff for 24 hours. Redirects are not followed. The answer holds the signing secret, shown only this once.",
          requestBody: { required: true, content: json("CreateWebhookRequest") },
          responses: { ...ok("The new webhook, with its secret", "IssuedWebhook", "201"), ...errorResponses(...writeErrors, ...bodyErrors) },
        },
      },
      "/admin/v1/webhooks/{id}": {
        delete: {
          summary: "Remove a webhook, with its pending deliveries",
          parameters: [webhookIdParameter],
          responses: { "204": { description: "Removed", headers: requestId }, ...errorResponses(...writeErrors, "not_found") },
        },
      },
      "/admin/v1/webhooks/{id}/test": {
        post: {
          summary: "Send a test event (webhook.test) to this webhook now",
          description: "The delivery is attempted at once and its outcome answered; a failure is retried like any delivery. The body may be left out; one that is sent is {}.",
          parameters: [webhookIdParameter],
          requestBody: { required: false, content: json("TestWebhookRequest") },
          responses: { ...ok("The event and the attempt made", "WebhookTestResult"), ...errorResponses(...writeErrors, ...bodyErrors, "not_found") },
        },
      },
      "/admin/v1/webhooks/{id}/deliveries": {
        get: {
          summary: "The webhook's latest 50 deliveries, newest first, with every attempt",
          description: "Each attempt: time, HTTP status (null without an answer), duration, the first 256 bytes of the answer's body, or the error.",
          parameters: [webhookIdParameter],
          responses: { ...ok("The deliveries", "AdminDeliveryList"), ...errorResponses(...tokenErrors, "invalid_request", "not_found") },
        },
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
      headers: { "X-Request-Id": HEADERS["X-Request-Id"], "WWW-Authenticate": HEADERS["WWW-Authenticate"], Allow: HEADERS.Allow, "Retry-After": HEADERS["Retry-After"], "Accept-Encoding": HEADERS["Accept-Encoding"] },
      responses: { NotFound: NOT_FOUND_RESPONSE },
      schemas: {
        AdminKey: plain(AdminKey),
        AdminKeyList: plain(AdminKeyList),
        IssuedKey: plain(IssuedKey),
        CreateKeyRequest: plain(CreateKeyRequest),
        SetKeyPlanRequest: plain(SetKeyPlanRequest),
        RotateKeyRequest: plain(RotateKeyRequest),
        RevokeKeyRequest: plain(RevokeKeyRequest),
        AuditList: plain(AuditList),
        AdminTokenInfo: plain(AdminTokenInfo),
        AdminPlan: plain(AdminPlan),
        AdminPlanList: plain(AdminPlanList),
        PutPlanRequest: plain(PutPlanRequest),
        AdminUsage: plain(AdminUsage),
        AdminStatus: plain(AdminStatus),
        AdminCorrection: plain(AdminCorrection),
        AdminCorrectionList: plain(AdminCorrectionList),
        PutCorrectionRequest: plain(PutCorrectionRequest),
        AsnResult: plain(AsnResultSchema),
        AsnSummary: plain(AsnSummarySchema),
        AsnSearch: { type: "object", required: ["results"], properties: { results: { type: "array", maxItems: 50, items: { $ref: "#/components/schemas/AsnSummary" } } } },
        AdminWebhook: plain(AdminWebhook),
        AdminWebhookList: plain(AdminWebhookList),
        IssuedWebhook: plain(IssuedWebhook),
        CreateWebhookRequest: plain(CreateWebhookRequest),
        TestWebhookRequest: plain(TestWebhookRequest),
        AdminDeliveryList: plain(AdminDeliveryList),
        WebhookTestResult: plain(WebhookTestResult),
        Problem: ProblemSchema,
      },
    },
  };
}

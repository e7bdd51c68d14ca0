import { Elysia } from "elysia";
import { ApiError } from "../errors/api-error.ts";
import { errorResponse } from "../http/error-response.ts";
import { readJsonBody } from "../http/json-body.ts";
import { checkContentEncoding, isJsonMediaType } from "../http/media-type.ts";
import { createLogger, type Logger } from "../log/logger.ts";
import type { AdminToken, DeliveryState } from "../store/store.ts";
import { AdminRouteTable, checkAdminGate } from "./admin-gate.ts";
import { checkAdminBody } from "./admin-input.ts";
import { adminOpenApiDocument } from "./admin-openapi.ts";
import { AuditQuery, CreateKeyRequest, NoQuery, PutCorrectionRequest, PutPlanRequest, RevokeKeyRequest, RotateKeyRequest, SetKeyPlanRequest, UsageQuery } from "./admin-schemas.ts";
import { AdminCorrections } from "./admin-corrections.ts";
import { AuditLog } from "../audit/audit-log.ts";
import { AdminService, type AdminServiceDeps } from "./admin-service.ts";
import { consoleAsset, type ConsoleAssetName } from "./console-assets.ts";
import { AsnService, type AsnAnswer } from "../asn/asn-service.ts";
import { queryValues } from "../http/query-values.ts";
import type { RangeIndex } from "../index/range-index.ts";
import type { CorrectionTable } from "../corrections/correction-table.ts";
import { AsnSearchQuery } from "../http/schemas.ts";
import { Deliverer } from "../events/deliverer.ts";
import { AdminWebhooks } from "./admin-webhooks.ts";
import { CreateWebhookRequest, TestWebhookRequest } from "./webhook-schemas.ts";

export interface AdminAppDeps extends AdminServiceDeps {
  /** Where unhandled errors are logged (default: errors to stderr). */
  readonly logger?: Logger;
  /** The range index answering now, for the console's AS lookups (/admin/v1/asn); without it they answer 404. */
  readonly index?: () => RangeIndex;
  /** The local corrections the lookups answer with now, which the AS lookups follow (none by default). */
  readonly corrections?: () => CorrectionTable | null;
  /** Hears of each test event's attempt, as serve's deliverer's: the server's /metrics counts them. */
  readonly onWebhookAttempt?: (state: DeliveryState) => void;
}

/** What the admin app learns of a request before it runs: the route matched and the admin token. */
export interface AdminRequestInfo {
  route: string | undefined;
  token: AdminToken | null;
}

/** The largest admin request body: the bodies are a few short fields. */
export const ADMIN_MAX_BODY = 64 * 1024;

/** The routes whose requests carry a JSON body (the others' bodies are never read). */
const BODY_ROUTES = new Set(["POST /admin/v1/keys", "PATCH /admin/v1/keys/:id", "PUT /admin/v1/plans/:name", "PUT /admin/v1/corrections/:cidr", "POST /admin/v1/webhooks"]);
/**
 * Routes whose JSON body may be left out (then it is `{}`): a rotation's grace, and a
 * revocation's and a webhook's test event's (which take nothing, but are refused what
 * they do not take, as every body is).
 */
const OPTIONAL_BODY_ROUTES = new Set(["POST /admin/v1/keys/:id/rotate", "POST /admin/v1/keys/:id/revoke", "POST /admin/v1/webhooks/:id/test"]);

/** Whether the request's body is read: always on BODY_ROUTES, on OPTIONAL_BODY_ROUTES when one is sent. */
function readsBody(request: Request, route: string | undefined): boolean {
  const id = `${request.method} ${route}`;
  if (BODY_ROUTES.has(id)) return true;
  if (!OPTIONAL_BODY_ROUTES.has(id)) return false;
  return request.body !== null && request.headers.get("content-length") !== "0";
}

const infos = new WeakMap<Request, AdminRequestInfo>();

/** The route and admin token of a request the admin app has seen (for the access log). */
export function adminRequestInfo(request: Request): AdminRequestInfo | undefined {
  return infos.get(request);
}

/**
 * The admin app (CONTRACT §10), served only by the admin listener: the admin API under
 * /admin/v1 (every request with an admin token, never an API key), its OpenAPI document
 * at /admin/openapi.json, and the console at /console. Errors are the public API's
 * problem+json, made by the same errorResponse. Admin requests charge no units: nothing
 * here meters.
 */
export function createAdminApp(deps: AdminAppDeps) {
  const corrections = new AdminCorrections(deps.store, new AuditLog(deps.store, deps.now));
  const asns = deps.index && new AsnService(deps.index, deps.corrections);
  /** The console's AS lookups: the public API's answers, at no cost (admin requests charge no units). */
  const asnAnswer = async (answer: () => Promise<AsnAnswer>) => {
    if (!asns) throw new ApiError("not_found", "this admin listener has no data loaded to answer AS lookups");
    const { body, dataVersion } = await answer();
    return new Response(body, { headers: { "content-type": "application/json", "cache-control": "no-store", "x-data-version": dataVersion } });
  };
  const logger = deps.logger ?? createLogger("error", (line) => process.stderr.write(`${line}\n`));
  const service = new AdminService(deps);
  // "Send a test event" attempts its delivery at once, on this thread, as serve's deliverer would.
  const webhooks = new AdminWebhooks(deps.store, deps.now, new Deliverer({ store: deps.store, now: () => deps.now().getTime(), logger, onAttempt: deps.onWebhookAttempt }));
  let routes: AdminRouteTable | undefined;
  let openApi: string | undefined;

  const app = new Elysia({ normalize: false, strictPath: true, handler: { standardHostname: false } })
    .onRequest(async ({ request }) => {
      const info: AdminRequestInfo = { route: undefined, token: null };
      infos.set(request, info);
      info.token = await checkAdminGate(request, (routes ??= new AdminRouteTable(app.routes)), deps.store, (route) => (info.route = route));
      if (readsBody(request, info.route)) {
        if (!isJsonMediaType(request.headers.get("content-type"))) throw new ApiError("unsupported_media_type", "send the body as application/json (charset utf-8, if any)");
        checkContentEncoding(request.headers.get("content-encoding"));
      }
    })
    .onParse(({ request }) => {
      const info = infos.get(request);
      // Only the routes that take a body read one; …/rotate, …/revoke and …/test read one if sent.
      if (!info?.route || !readsBody(request, info.route)) return {};
      const declared = request.headers.get("content-length");
      if (declared !== null && Number(declared) > ADMIN_MAX_BODY) {
        throw new ApiError("payload_too_large", `the request body is larger than ${ADMIN_MAX_BODY} bytes`, { max_body_bytes: ADMIN_MAX_BODY });
      }
      return readJsonBody(request, ADMIN_MAX_BODY).then((body) => {
        checkAdminBody(body);
        return body;
      });
    })
    .onError(({ error, code }) => errorResponse(error, code, logger, "admin"))
    .get("/admin/v1/keys", async () => json({ keys: await service.listKeys() }), { query: NoQuery })
    .post("/admin/v1/keys", async ({ body, request }) => json(await service.createKey(actorOf(request), body), 201), { body: CreateKeyRequest })
    .post("/admin/v1/keys/:id/rotate", async ({ params, body, request }) => json(await service.rotateKey(actorOf(request), params.id, body.grace)), { body: RotateKeyRequest })
    .post("/admin/v1/keys/:id/revoke", async ({ params, request }) => json(await service.revokeKey(actorOf(request), params.id)), { body: RevokeKeyRequest })
    .patch("/admin/v1/keys/:id", async ({ params, body, request }) => json(await service.updateKey(actorOf(request), params.id, body)), { body: SetKeyPlanRequest })
    .get("/admin/v1/plans", async () => json({ plans: await service.listPlans() }), { query: NoQuery })
    .put("/admin/v1/plans/:name", async ({ params, body, request }) => json(await service.putPlan(actorOf(request), params.name, body)), { body: PutPlanRequest })
    .get("/admin/v1/usage", async ({ query }) => json(await service.usage(query)), { query: UsageQuery })
    .get("/admin/v1/audit", async ({ query }) => json(await service.auditLog(query)), { query: AuditQuery })
    .get("/admin/v1/token", ({ request }) => {
      const token = infos.get(request)!.token!;
      return json({ id: token.id, name: token.name, read_only: token.readOnly === true });
    }, { query: NoQuery })
    .get("/admin/v1/status", () => json(service.status()), { query: NoQuery })
    .get("/admin/v1/corrections", async () => json({ corrections: await corrections.list() }), { query: NoQuery })
    .put("/admin/v1/corrections/:cidr", async ({ params, body, request }) => json(await corrections.put(actorOf(request), params.cidr, body)), { body: PutCorrectionRequest })
    .delete("/admin/v1/corrections/:cidr", async ({ params, request }) => json(await corrections.remove(actorOf(request), params.cidr)))
    .get("/admin/v1/asn/:asn", ({ params }) => asnAnswer(() => asns!.answer(asns!.check(params.asn))))
    .get("/admin/v1/asn", ({ request }) => asnAnswer(() => asns!.search(asns!.checkQuery(queryValues(request.url, "q")))), { query: AsnSearchQuery })
    .get("/admin/v1/webhooks", async ({ request }) => json({ webhooks: await webhooks.list(tokenOf(request).readOnly === true) }), { query: NoQuery })
    .post("/admin/v1/webhooks", async ({ body, request }) => json(await webhooks.create(actorOf(request), body.url, body.events), 201), { body: CreateWebhookRequest })
    .delete("/admin/v1/webhooks/:id", async ({ params, request }) => (await webhooks.remove(actorOf(request), params.id), new Response(null, { status: 204, headers: { "cache-control": "no-store" } })))
    .post("/admin/v1/webhooks/:id/test", async ({ params }) => json(await webhooks.test(params.id)), { body: TestWebhookRequest })
    .get("/admin/v1/webhooks/:id/deliveries", async ({ params }) => json({ deliveries: await webhooks.deliveries(params.id) }), { query: NoQuery })
    .get("/admin/openapi.json", () => new Response((openApi ??= JSON.stringify(adminOpenApiDocument(deps.version))), { headers: { "content-type": "application/json" } }))
    .get("/console", () => asset("page"))
    .get("/console/console.js", () => asset("script"))
    .get("/console/console.css", () => asset("style"))
    .get("/console/favicon.svg", () => asset("icon"));
  return app;
}

export type AdminApp = ReturnType<typeof createAdminApp>;

/** Who makes a change through the admin API (and the console): the admin token's id, for the audit log. */
function actorOf(request: Request): string {
  return tokenOf(request).id;
}

/** The admin token of an /admin/v1 request, which the gate has checked before any route runs. */
function tokenOf(request: Request): AdminToken {
  const token = infos.get(request)?.token;
  if (!token) throw new Error("no admin token recorded for an /admin/v1 request");
  return token;
}

/**
 * An admin API answer: never stored by a browser or a proxy (the keys' secrets pass
 * through here once).
 */
function json(value: unknown, status = 200): Response {
  return new Response(JSON.stringify(value), { status, headers: { "content-type": "application/json", "cache-control": "no-store" } });
}

/**
 * The console's files, embedded in the binary. The page allows scripts, styles and
 * requests from its own origin only, and cannot be framed; nothing is fetched from
 * elsewhere, and the admin token in the page's fragment is never sent. The admin
 * listener adds X-Content-Type-Options: nosniff to these as to every admin answer.
 */
async function asset(name: ConsoleAssetName): Promise<Response> {
  const { body, type } = await consoleAsset(name);
  const headers: Record<string, string> = { "content-type": type, "cache-control": "no-cache", "referrer-policy": "no-referrer" };
  if (name === "page") {
    headers["content-security-policy"] =
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";
    headers["x-frame-options"] = "DENY";
  }
  return new Response(body, { headers });
}

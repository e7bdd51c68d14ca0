import { Elysia } from "elysia";
import { ApiError } from "../errors/api-error.ts";
import { errorResponse } from "../http/error-response.ts";
import { readJsonBody } from "../http/json-body.ts";
import { isJsonMediaType } from "../http/media-type.ts";
import { createLogger, type Logger } from "../log/logger.ts";
import type { AdminToken } from "../store/store.ts";
import { AdminRouteTable, checkAdminGate } from "./admin-gate.ts";
import { adminOpenApiDocument } from "./admin-openapi.ts";
import { CreateKeyRequest, PutPlanRequest, SetKeyPlanRequest, UsageQuery } from "./admin-schemas.ts";
import { AdminService, type AdminServiceDeps } from "./admin-service.ts";
import { consoleAsset, type ConsoleAssetName } from "./console-assets.ts";

export interface AdminAppDeps extends AdminServiceDeps {
  /** Where unhandled errors are logged (default: errors to stderr). */
  readonly logger?: Logger;
}

/** What the admin app learns of a request before it runs: the route matched and the admin token. */
export interface AdminRequestInfo {
  route: string | undefined;
  token: AdminToken | null;
}

/** The largest admin request body: the bodies are a few short fields. */
export const ADMIN_MAX_BODY = 64 * 1024;

/** The routes whose requests carry a JSON body (the others' bodies are never read). */
const BODY_ROUTES = new Set(["POST /admin/v1/keys", "PATCH /admin/v1/keys/:id", "PUT /admin/v1/plans/:name"]);

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
  const service = new AdminService(deps);
  const logger = deps.logger ?? createLogger("error", (line) => process.stderr.write(`${line}\n`));
  let routes: AdminRouteTable | undefined;
  let openApi: string | undefined;

  const app = new Elysia({ normalize: false, strictPath: true, handler: { standardHostname: false } })
    .onRequest(async ({ request }) => {
      const info: AdminRequestInfo = { route: undefined, token: null };
      infos.set(request, info);
      info.token = await checkAdminGate(request, (routes ??= new AdminRouteTable(app.routes)), deps.store, (route) => (info.route = route));
      if (BODY_ROUTES.has(`${request.method} ${info.route}`) && !isJsonMediaType(request.headers.get("content-type"))) {
        throw new ApiError("unsupported_media_type", "send the body as application/json (charset utf-8, if any)");
      }
    })
    .onParse(({ request }) => {
      const info = infos.get(request);
      // Only the routes that take a body read one; POST …/rotate and …/revoke ignore theirs.
      if (!info?.route || !BODY_ROUTES.has(`${request.method} ${info.route}`)) return {};
      const declared = request.headers.get("content-length");
      if (declared !== null && Number(declared) > ADMIN_MAX_BODY) {
        throw new ApiError("payload_too_large", `the request body is larger than ${ADMIN_MAX_BODY} bytes`, { max_body_bytes: ADMIN_MAX_BODY });
      }
      return readJsonBody(request, ADMIN_MAX_BODY);
    })
    .onError(({ error, code }) => errorResponse(error, code, logger))
    .get("/admin/v1/keys", async () => json({ keys: await service.listKeys() }))
    .post("/admin/v1/keys", async ({ body }) => json(await service.createKey(body.name, body.plan), 201), { body: CreateKeyRequest })
    .post("/admin/v1/keys/:id/rotate", async ({ params }) => json(await service.rotateKey(params.id)))
    .post("/admin/v1/keys/:id/revoke", async ({ params }) => json(await service.revokeKey(params.id)))
    .patch("/admin/v1/keys/:id", async ({ params, body }) => json(await service.setKeyPlan(params.id, body.plan)), { body: SetKeyPlanRequest })
    .get("/admin/v1/plans", async () => json({ plans: await service.listPlans() }))
    .put("/admin/v1/plans/:name", async ({ params, body }) => json(await service.putPlan(params.name, body)), { body: PutPlanRequest })
    .get("/admin/v1/usage", async ({ query }) => json(await service.usage(query)), { query: UsageQuery })
    .get("/admin/v1/status", () => json(service.status()))
    .get("/admin/openapi.json", () => new Response((openApi ??= JSON.stringify(adminOpenApiDocument(deps.version))), { headers: { "content-type": "application/json" } }))
    .get("/console", () => asset("page"))
    .get("/console/console.js", () => asset("script"))
    .get("/console/console.css", () => asset("style"))
    .get("/console/favicon.svg", () => asset("icon"));
  return app;
}

export type AdminApp = ReturnType<typeof createAdminApp>;

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
 * elsewhere, and the admin token in the page's fragment is never sent.
 */
async function asset(name: ConsoleAssetName): Promise<Response> {
  const { body, type } = await consoleAsset(name);
  const headers: Record<string, string> = { "content-type": type, "cache-control": "no-cache", "x-content-type-options": "nosniff", "referrer-policy": "no-referrer" };
  if (name === "page") {
    headers["content-security-policy"] =
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";
    headers["x-frame-options"] = "DENY";
  }
  return new Response(body, { headers });
}

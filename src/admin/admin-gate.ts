import { ApiError } from "../errors/api-error.ts";
import { looksLikeAdminSecret } from "../store/admin-token.ts";
import { hashSecret } from "../store/secret.ts";
import type { AdminToken, Store } from "../store/store.ts";
import { pathOf } from "../http/path.ts";
import { checkAdminTarget } from "./admin-input.ts";

/** A route of the admin app: its method and its path pattern (`:name` matches one segment). */
export interface AdminRoute {
  readonly method: string;
  readonly path: string;
}

/** The admin app's paths, each with the methods it answers (GET implies HEAD). */
export class AdminRouteTable {
  private readonly patterns: { readonly path: string; readonly regex: RegExp; readonly methods: string[] }[] = [];

  constructor(routes: readonly AdminRoute[]) {
    for (const route of routes) {
      let entry = this.patterns.find((pattern) => pattern.path === route.path);
      if (!entry) {
        const source = route.path.split("/").map((part) => (part.startsWith(":") ? "[^/]+" : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))).join("/");
        entry = { path: route.path, regex: new RegExp(`^${source}$`), methods: [] };
        this.patterns.push(entry);
      }
      entry.methods.push(route.method);
      if (route.method === "GET") entry.methods.push("HEAD");
    }
  }

  /** The pattern a path matches and its methods, or undefined. */
  match(path: string): { readonly path: string; readonly methods: readonly string[] } | undefined {
    return this.patterns.find((pattern) => pattern.regex.test(path));
  }
}

const REALM = 'Bearer realm="iplookup admin"';

/**
 * The console's AS lookups, which answer as the public API's /v1/asn routes do (CONTRACT
 * §14, docs/autonomous-systems.md), the same JSON for any request-target: they check
 * their path and query with the public routes' own rules (a number in bad
 * percent-encoding is 400 invalid_asn, `q` is searched as it decodes), so the admin
 * request-target check, written for input that is stored, is not theirs. They read only.
 */
const PUBLIC_ANSWER_ROUTES: ReadonlySet<string> = new Set(["/admin/v1/asn/:asn", "/admin/v1/asn"]);

/**
 * The checks before an admin request runs, in the public API's order: route (404, 405
 * with Allow), then, for `/admin/v1/…`, the admin token: `missing_key` without one,
 * `invalid_key` for anything that is not an active admin token (an API key included:
 * only admin tokens are looked up); then the request-target's path and query must decode
 * to text without control characters (`invalid_request`; the AS lookups check theirs as
 * the public routes do, see PUBLIC_ANSWER_ROUTES). Resolves to the token, or null for the routes that
 * need none (the console's page and assets, the OpenAPI document); `found` hears of the
 * route as soon as it is matched, so a refused request is logged under its route.
 */
export async function checkAdminGate(request: Request, routes: AdminRouteTable, store: Store, found: (route: string) => void): Promise<AdminToken | null> {
  const path = pathOf(request.url);
  const route = routes.match(path);
  if (!route) throw new ApiError("not_found", `there is no route ${path}`);
  found(route.path);
  if (!route.methods.includes(request.method)) {
    throw new ApiError("method_not_allowed", `${path} answers ${route.methods.join(", ")}, not ${request.method}`, {}, { allow: route.methods.join(", ") });
  }
  if (!path.startsWith("/admin/v1/")) return null;
  const header = request.headers.get("authorization");
  const secret = header !== null && /^bearer /i.test(header) ? header.slice(7).trim() : "";
  if (secret === "") {
    throw new ApiError("missing_key", "send an admin token as Authorization: Bearer <token> (iplookup admin create)", {}, { "www-authenticate": REALM });
  }
  const token = looksLikeAdminSecret(secret) ? await store.findAdminToken(hashSecret(secret)) : null;
  if (!token) {
    throw new ApiError("invalid_key", "the admin token is unknown or revoked", {}, {
      "www-authenticate": `${REALM}, error="invalid_token", error_description="the admin token is unknown or revoked"`,
    });
  }
  // After the route and the token: a read-only token may only read (CONTRACT §16).
  if (token.readOnly && request.method !== "GET" && request.method !== "HEAD") {
    throw new ApiError("read_only_token", `the admin token ${token.id} is read-only: it may only read (GET), not ${request.method}`);
  }
  if (!PUBLIC_ANSWER_ROUTES.has(route.path)) checkAdminTarget(request.url, path);
  return token;
}

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Elysia } from "elysia";
import fc from "fast-check";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathOf, requestForApp } from "../../src/http/path.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { selfSignedCertificate } from "../support/certificate.ts";
import { startSocketServer, type SocketServer } from "../support/in-process-server.ts";
import { rawRequest } from "../support/raw-http.ts";

/**
 * CONTRACT §13, one path for every decision: whatever the request-target and Host
 * header, the gate and the router decide on the same path, so no form reaches a route
 * that needs a key or an admin token without one.
 */

describe("pathOf is the router's own rule", () => {
  // The router's path, as the app's handler sees it.
  const router = new Elysia({ normalize: false, strictPath: true, handler: { standardHostname: false } }).all("/*", ({ path }) => path);
  const pieces = ["/", "//", "?", "/admin/v1/keys", "/v1/me", "x", "console", "%2F", "%zz", "%00", "..", ".", "#", "@", ":", ";", "\\", "ip", "a.bc"];
  const target = fc.array(fc.constantFrom(...pieces), { minLength: 1, maxLength: 8 }).map((parts) => parts.join(""));
  const host = fc.constantFrom("http://a", "http://ip", "http://localhost:8080", "http://[::1]", "http://iplookup.internal.example");

  test("for every URL a request can carry, pathOf and the router agree", async () => {
    await fc.assert(
      fc.asyncProperty(host, target, async (origin, path) => {
        let request: Request;
        try {
          request = new Request(`${origin}${path.startsWith("/") ? "" : "/"}${path}`);
        } catch {
          return;
        }
        const routed = await (await router.handle(request)).text();
        expect(pathOf(request.url)).toBe(routed);
      }),
      { numRuns: 500 },
    );
  });

  test("requestForApp gives an absolute http URL, its path the request-target's", () => {
    const received = new Request("https://h:8443/v1/lookup/batch?x=1", { method: "POST", body: "{}" });
    const forApp = requestForApp(received);
    expect(forApp.url).toBe("http://h:8443/v1/lookup/batch?x=1");
    expect(forApp.method).toBe("POST");
    expect(pathOf(forApp.url)).toBe("/v1/lookup/batch");
    const plain = new Request("http://h/readyz");
    expect(requestForApp(plain)).toBe(plain);
  });
});

describe("request-target forms on both listeners (raw sockets)", () => {
  let server: SocketServer;
  let publicPort: number;
  let adminPort: number;
  let adminToken: string;
  let apiKey: string;

  beforeAll(async () => {
    server = await startSocketServer({ "admin-port": "0", "log-level": "info" });
    publicPort = server.port;
    adminPort = Number(new URL(server.adminUrl!).port);
    const store = SqliteStore.open(server.statePath);
    adminToken = (await store.createAdminToken("request-target test")).secret;
    apiKey = (await store.createKey("request-target test", "unlimited")).secret;
    await store.close();
  });
  afterAll(() => server?.close());

  const noHost = (target: string, method = "GET") => `${method} ${target} HTTP/1.0\r\n\r\n`;
  const withHost = (target: string, host: string, extra = "") => `GET ${target} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n${extra}\r\n`;
  /** Every shape that got through the admin gate, and their relatives. */
  const adminForms = [
    noHost("//x/console?/admin/v1/keys"),
    noHost("//x/console?/admin/v1/status"),
    noHost("///admin/v1/keys"),
    noHost("//admin/v1/keys"),
    noHost("//console?/admin/v1/keys"),
    noHost("http://evil/admin/v1/keys"),
    noHost("//x/console/console.js?/admin/v1/keys"),
    withHost("//x/console?/admin/v1/keys", ""),
    withHost("//x/console?/admin/v1/keys", "a b"),
    withHost("//x/console?/admin/v1/keys", "a/b?c"),
    withHost("//x/console?/admin/v1/keys", "ip"),
    withHost("//x/console?/admin/v1/keys", "example.com"),
    withHost("http://evil//x/console?/admin/v1/keys", "example.com"),
    withHost("/console/..%2Fadmin/v1/keys", "ip"),
    withHost("/%2Fadmin/v1/keys", "ip"),
    withHost("/admin%2Fv1%2Fkeys", "ip"),
  ];

  test.each(adminForms)("admin listener, no token: %j reaches no admin route", async (form) => {
    const answer = await rawRequest(adminPort, form);
    expect([400, 401, 404]).toContain(answer.status);
    expect(answer.body).not.toContain("key_");
    expect(answer.body).not.toContain("uptime_seconds");
    if (answer.status === 401) expect(JSON.parse(answer.body).code).toBe("missing_key");
  });

  test("admin listener, no Host: the admin API answers with a token and refuses without one", async () => {
    const refused = await rawRequest(adminPort, noHost("/admin/v1/status"));
    expect(refused.status).toBe(401);
    const answered = await rawRequest(adminPort, `GET /admin/v1/status HTTP/1.0\r\nAuthorization: Bearer ${adminToken}\r\n\r\n`);
    expect(answered.status).toBe(200);
    expect(JSON.parse(answered.body).workers).toBeGreaterThan(0);
    const page = await rawRequest(adminPort, noHost("/console"));
    expect(page.status).toBe(200);
    expect(page.headers["content-type"]).toStartWith("text/html");
  });

  const publicForms = [
    noHost("//x/docs?/v1/me"),
    noHost("//x/healthz?/v1/usage"),
    noHost("//x/openapi.json?/v1/me"),
    noHost("///v1/me"),
    noHost("http://evil/v1/me"),
    withHost("//x/docs?/v1/me", ""),
    withHost("//x/docs?/v1/me", "a b"),
    withHost("//x/healthz?/v1/usage", "ip"),
    withHost("/docs/..%2Fv1/me", "ip"),
  ];

  test.each(publicForms)("public listener, no key: %j reaches no keyed route", async (form) => {
    const answer = await rawRequest(publicPort, form);
    expect([400, 401, 404]).toContain(answer.status);
    expect(answer.body).not.toContain('"ip"');
    expect(answer.body).not.toContain('"units"');
  });

  test.each(["/readyz", "/healthz"])("GET and HEAD %s without Host (a load balancer's check) answer 200", async (path) => {
    const got = await rawRequest(publicPort, noHost(path));
    expect(got.status).toBe(200);
    const head = await rawRequest(publicPort, noHost(path, "HEAD"));
    expect(head.status).toBe(200);
  });

  test("without Host, a keyed route is routed by its whole path and charged once", async () => {
    const body = JSON.stringify({ ips: ["1.1.1.1", "8.8.8.8"] });
    const answer = await rawRequest(
      publicPort,
      `POST /v1/lookup/batch HTTP/1.0\r\nAuthorization: Bearer ${apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    expect(answer.status).toBe(200);
    expect(answer.headers["x-units-consumed"]).toBe("2");
    expect(JSON.parse(answer.body).results).toHaveLength(2);
    const me = await rawRequest(publicPort, `GET /v1/me HTTP/1.0\r\nAuthorization: Bearer ${apiKey}\r\n\r\n`);
    expect(me.status).toBe(200);
    expect(JSON.parse(me.body).ip).toBe("127.0.0.1");
  });

  test("the access log and the metrics name the route the gate and the router took", async () => {
    await rawRequest(publicPort, noHost("/readyz?probe=1"));
    await rawRequest(publicPort, noHost("//x/healthz?/v1/usage"));
    const lines = server.logs.filter((line) => line.includes('"msg":"request"') || line.includes('"route"'));
    expect(lines.some((line) => line.includes('"route":"/readyz"') && line.includes('"status":200'))).toBe(true);
    expect(lines.some((line) => line.includes('"route":"other"') && line.includes('"status":404'))).toBe(true);
    const metrics = await rawRequest(publicPort, noHost("/metrics"));
    expect(metrics.body).toMatch(/iplookup_http_requests_total\{route="\/readyz",method="GET",status="200"\} [1-9]/);
  });

  test("a request-target of bad percent-encoding is 400, 404 or 405 on both listeners, never 500", async () => {
    for (const [port, target] of [
      [publicPort, "/v1/%zz"],
      [publicPort, "/%"],
      [adminPort, "/admin/v1/plans/%zz"],
      [adminPort, "/console/%E2%82"],
    ] as const) {
      const answer = await rawRequest(port, withHost(target, "ip", `Authorization: Bearer ${adminToken}\r\n`));
      expect([400, 404, 405]).toContain(answer.status);
    }
  });

  test("asterisk-form is refused", async () => {
    for (const port of [publicPort, adminPort]) {
      expect((await rawRequest(port, "OPTIONS * HTTP/1.1\r\nHost: ip\r\n\r\n")).status).toBe(400);
    }
  });
});

describe("fuzzed request-targets and headers: nothing without credentials reaches a credentialed route", () => {
  let server: SocketServer;
  beforeAll(async () => {
    server = await startSocketServer({ "admin-port": "0" });
  });
  afterAll(() => server?.close());

  const pieces = ["/", "//", "///", "?", "&", "=", "admin", "v1", "keys", "status", "plans", "usage", "me", "console", "docs", "healthz", "openapi.json", "%2F", "%2f", "%3F", "%zz", "%00", "%", "..", ".", "http:", "@", ";", "x"];
  const randomTarget = fc.array(fc.constantFrom(...pieces), { minLength: 1, maxLength: 10 }).map((parts) => parts.join(""));
  // The shape of every form that once got through: a path the gate lets pass, then a
  // credentialed path where a careless reading of the URL would find one.
  const openPath = fc.constantFrom("/console", "//x/console", "//console", "/healthz", "//x/healthz", "//x/docs", "///", "//", "//x/console/console.js", "/openapi.json");
  const closedPath = fc.constantFrom("/admin/v1/keys", "/admin/v1/status", "/admin/v1/plans", "/v1/me", "/v1/usage");
  const joiner = fc.constantFrom("?", "?x=", "#", "/", "//", "%3F", ";");
  const smuggled = fc.tuple(openPath, joiner, closedPath).map(([open, join, closed]) => `${open}${join}${closed}`);
  const target = fc.oneof({ arbitrary: randomTarget, weight: 1 }, { arbitrary: smuggled, weight: 3 });
  const hostHeader = fc.constantFrom(null, "", "a b", "ip", "a/b", "a?b", "[::1]", "example.com:1", "@", "localhost");
  const version = fc.constantFrom("HTTP/1.0", "HTTP/1.1");
  const method = fc.oneof({ arbitrary: fc.constant("GET"), weight: 4 }, { arbitrary: fc.constantFrom("HEAD", "POST", "PATCH", "PUT", "DELETE"), weight: 1 });

  test.each(["public", "admin"] as const)("%s listener", async (which) => {
    const port = which === "public" ? server.port : Number(new URL(server.adminUrl!).port);
    await fc.assert(
      fc.asyncProperty(method, target, version, hostHeader, async (verb, path, http, host) => {
        const head = `${verb} ${path.startsWith("/") || path.startsWith("http:") ? path : `/${path}`} ${http}\r\n${host === null ? "" : `Host: ${host}\r\n`}Connection: close\r\nContent-Length: 0\r\n\r\n`;
        const answer = await rawRequest(port, head);
        // A credentialed route refuses with 401, or the request is not routed (404, 405,
        // Bun's 400 for a malformed request-target). A 2xx comes only from a route that
        // needs no credentials: the health checks and the OpenAPI document (JSON with
        // `status` or `openapi`), or a page, script, style, icon or the metrics (not JSON).
        expect(answer.status).not.toBe(500);
        if (answer.status >= 200 && answer.status < 300 && verb !== "HEAD") {
          if ((answer.headers["content-type"] ?? "").startsWith("application/json")) {
            const body = JSON.parse(answer.body) as Record<string, unknown>;
            expect(Object.keys(body).sort()).toBeOneOf([["status"], ["data_built_at", "data_version", "status"], ["components", "info", "openapi", "paths", "security", "servers"]]);
          } else {
            expect(answer.headers["content-type"]).toMatch(/^(text\/html|text\/javascript|text\/css|image\/svg\+xml|text\/plain; version=0\.0\.4)/);
          }
        }
      }),
      { numRuns: 600 },
    );
  });
});

describe("the same forms over TLS", () => {
  let server: SocketServer;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "iplookup-request-target-tls-"));
    const { cert, key } = selfSignedCertificate(dir, "request-target");
    server = await startSocketServer({ "admin-port": "0", "tls-cert": cert, "tls-key": key });
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("no Host: health checks answer, smuggled admin and keyed paths do not", async () => {
    const adminPort = Number(new URL(server.adminUrl!).port);
    expect((await rawRequest(server.port, "GET /readyz HTTP/1.0\r\n\r\n", { tls: true })).status).toBe(200);
    expect((await rawRequest(server.port, "GET //x/healthz?/v1/me HTTP/1.0\r\n\r\n", { tls: true })).status).toBe(404);
    expect((await rawRequest(adminPort, "GET //x/console?/admin/v1/keys HTTP/1.0\r\n\r\n", { tls: true })).status).toBe(404);
    expect((await rawRequest(adminPort, "GET /admin/v1/keys HTTP/1.0\r\n\r\n", { tls: true })).status).toBe(401);
  });
});

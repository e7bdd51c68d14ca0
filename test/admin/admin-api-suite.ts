import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { cli, startServerProcess, type ServerProcess } from "../support/server-process.ts";

/**
 * The admin API of CONTRACT §10, end to end: a real `serve` with two worker threads and
 * its admin listener (--admin-port 0), spoken to over sockets, its admin token made with
 * the CLI. Run once a state kind (admin-api.test.ts: a SQLite file, and a PostgreSQL
 * database where one is reachable).
 */
export function adminApiSuite(fresh: () => Promise<string>): void {
  let server: ServerProcess;
  let admin: string;
  let token: string;
  let state: string;

  const today = () => new Date().toISOString().slice(0, 10);
  const adminRequest = (method: string, path: string, options: { body?: unknown; bearer?: string | null; contentType?: string } = {}) => {
    const headers: Record<string, string> = {};
    const bearer = options.bearer === undefined ? token : options.bearer;
    if (bearer !== null) headers.authorization = `Bearer ${bearer}`;
    if (options.body !== undefined) headers["content-type"] = options.contentType ?? "application/json";
    const body = options.body === undefined ? undefined : typeof options.body === "string" ? options.body : JSON.stringify(options.body);
    return fetch(`${admin}${path}`, { method, headers, body });
  };
  const adminJson = async <T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> => {
    const response = await adminRequest(method, path, { body });
    return { status: response.status, body: (await response.json()) as T };
  };
  const lookup = (key: string, ip = "1.1.1.1") =>
    fetch(`${server.url}/v1/lookup`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ ip }) });
  const batch = (key: string, ips: string[]) =>
    fetch(`${server.url}/v1/lookup/batch`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ ips }) });
  const usageOf = async (key: string) => (await (await fetch(`${server.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } })).json()) as { plan: Record<string, unknown>; units: { used: number } };
  /** Polls until `done` holds, for at most a second; resolves to the milliseconds it took. */
  const withinASecond = async (done: () => Promise<boolean>): Promise<number> => {
    const start = performance.now();
    while (!(await done())) {
      if (performance.now() - start > 1000) throw new Error("not within a second");
      await Bun.sleep(25);
    }
    return performance.now() - start;
  };

  beforeAll(async () => {
    state = await fresh();
    const created = cli(["admin", "create", "--name", "ops", "--json"], { IPLOOKUP_STATE: state });
    expect(created.code).toBe(0);
    token = (JSON.parse(created.stdout) as { token: string }).token;
    server = await startServerProcess(["--state", state, "--workers", "2", "--admin-port", "0"]);
    const match = /"admin":"([^"]+)"/.exec(server.stderr());
    admin = match![1]!.replace(/\/$/, "");
  });
  afterAll(async () => {
    await server?.stop("SIGKILL");
  });

  test("the start-up line names the admin listener, on 127.0.0.1 by default", () => {
    expect(admin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(admin).not.toBe(server.url);
  });

  describe("admin tokens", () => {
    test("every /admin/v1 request needs one: missing_key, then invalid_key (an API key is not an admin token)", async () => {
      const missing = await adminRequest("GET", "/admin/v1/keys", { bearer: null });
      expect(missing.status).toBe(401);
      expect(missing.headers.get("content-type")).toBe("application/problem+json");
      expect(missing.headers.get("www-authenticate")).toStartWith("Bearer realm=");
      expect(((await missing.json()) as { code: string }).code).toBe("missing_key");

      const { body: issued } = await adminJson<{ key: string }>("POST", "/admin/v1/keys", { name: "not-an-admin", plan: "standard" });
      for (const bearer of [issued.key, "ipla_" + "A".repeat(43), "nonsense"]) {
        const refused = await adminRequest("GET", "/admin/v1/keys", { bearer });
        expect(refused.status).toBe(401);
        expect(refused.headers.get("www-authenticate")).toContain('error="invalid_token"');
        expect(((await refused.json()) as { code: string }).code).toBe("invalid_key");
      }
    });

    test("an admin token is not an API key: the public port answers invalid_key", async () => {
      const response = await fetch(`${server.url}/v1/usage`, { headers: { authorization: `Bearer ${token}` } });
      expect(response.status).toBe(401);
      expect(((await response.json()) as { code: string }).code).toBe("invalid_key");
    });

    test("a token revoked with the CLI is refused at once; another keeps working", async () => {
      const other = JSON.parse(cli(["admin", "create", "--name", "temp", "--json"], { IPLOOKUP_STATE: state }).stdout) as { id: string; token: string; name: string };
      expect(other.token).toStartWith("ipla_");
      expect((await adminRequest("GET", "/admin/v1/plans", { bearer: other.token })).status).toBe(200);
      expect(cli(["admin", "revoke", other.id], { IPLOOKUP_STATE: state }).code).toBe(0);
      expect((await adminRequest("GET", "/admin/v1/plans", { bearer: other.token })).status).toBe(401);
      expect((await adminRequest("GET", "/admin/v1/plans")).status).toBe(200);
      const listed = JSON.parse(cli(["admin", "list", "--json"], { IPLOOKUP_STATE: state }).stdout) as { id: string; revoked_at: string | null }[];
      expect(listed.find((entry) => entry.id === other.id)?.revoked_at).not.toBeNull();
      expect(cli(["admin", "revoke", other.id], { IPLOOKUP_STATE: state }).code).toBe(1);
    });
  });

  describe("keys", () => {
    test("POST /admin/v1/keys: 201 with the secret, which works on the public port on the very next request", async () => {
      const response = await adminRequest("POST", "/admin/v1/keys", { body: { name: "acme", plan: "standard" } });
      expect(response.status).toBe(201);
      expect(response.headers.get("cache-control")).toBe("no-store");
      const issued = (await response.json()) as Record<string, string>;
      expect(Object.keys(issued).sort()).toEqual(["id", "key", "name", "plan"]);
      // (Not toMatchObject with matchers: Bun 1.4.4's writes the matchers into the object it checks.)
      expect([issued.id, issued.key, issued.name, issued.plan]).toEqual([expect.stringMatching(/^key_[a-z2-7]{16}$/), expect.stringMatching(/^ipl_[A-Za-z0-9_-]{43}$/), "acme", "standard"]);
      // Both threads: a few requests land on each.
      for (let i = 0; i < 6; i++) {
        const response = await lookup(issued.key!);
        expect({ i, status: response.status, body: response.status === 200 ? null : await response.text() }).toEqual({ i, status: 200, body: null });
      }
      const { body: defaulted } = await adminJson<{ plan: string }>("POST", "/admin/v1/keys", { name: "defaulted" });
      expect(defaulted.plan).toBe("free");
    });

    test("GET /admin/v1/keys: every key with its plan, times, last use and units this period; admin requests cost nothing", async () => {
      const { body: issued } = await adminJson<{ id: string; key: string }>("POST", "/admin/v1/keys", { name: "counted", plan: "standard" });
      expect((await lookup(issued.key)).status).toBe(200);
      expect((await batch(issued.key, ["8.8.8.8", "9.9.9.9", "8.8.8.8"])).status).toBe(200);
      const { status, body } = await adminJson<{ keys: Record<string, unknown>[] }>("GET", "/admin/v1/keys");
      expect(status).toBe(200);
      const key = body.keys.find((entry) => entry.id === issued.id)!;
      expect(Object.keys(key).sort()).toEqual([
        "allowed_cidrs",
        "allowed_origins",
        "created_at",
        "expires_at",
        "grace_until",
        "id",
        "last_used_at",
        "metadata",
        "name",
        "plan",
        "revoked_at",
        "units_this_period",
      ]);
      expect(key).toMatchObject({ name: "counted", plan: "standard", revoked_at: null, units_this_period: 4, expires_at: null, allowed_cidrs: null, allowed_origins: null, metadata: {}, grace_until: null });
      expect(Date.parse(key.created_at as string)).toBeGreaterThan(Date.now() - 60_000);
      expect(Date.parse(key.last_used_at as string)).toBeGreaterThan(Date.now() - 60_000);
      const never = body.keys.find((entry) => entry.name === "defaulted")!;
      expect(never.last_used_at).toBeNull();
      // Admin requests charge nothing.
      for (let i = 0; i < 3; i++) await adminJson("GET", "/admin/v1/keys");
      expect((await usageOf(issued.key)).units.used).toBe(4);
    });

    test("POST …/rotate: a new secret at once, the old one refused within a second", async () => {
      const { body: issued } = await adminJson<{ id: string; key: string }>("POST", "/admin/v1/keys", { name: "rotated", plan: "standard" });
      expect((await lookup(issued.key)).status).toBe(200);
      const { status, body: rotated } = await adminJson<Record<string, string>>("POST", `/admin/v1/keys/${issued.id}/rotate`);
      expect(status).toBe(200);
      expect(Object.keys(rotated).sort()).toEqual(["id", "key", "name", "plan"]);
      expect(rotated).toMatchObject({ id: issued.id, name: "rotated", plan: "standard" });
      expect(rotated.key).not.toBe(issued.key);
      expect((await lookup(rotated.key!)).status).toBe(200);
      await withinASecond(async () => (await lookup(issued.key)).status === 401);
    });

    test("PATCH /admin/v1/keys/{id}: another plan, applied by every thread within a second, the secret unchanged", async () => {
      const { body: issued } = await adminJson<{ id: string; key: string }>("POST", "/admin/v1/keys", { name: "mover", plan: "standard" });
      const { status, body } = await adminJson<Record<string, unknown>>("PATCH", `/admin/v1/keys/${issued.id}`, { plan: "unlimited" });
      expect(status).toBe(200);
      expect(body).toMatchObject({ id: issued.id, plan: "unlimited", revoked_at: null });
      await withinASecond(async () => (await usageOf(issued.key)).plan.name === "unlimited");
      // Every thread: several requests in a row all see it.
      for (let i = 0; i < 6; i++) expect((await usageOf(issued.key)).plan.name).toBe("unlimited");
      expect((await adminJson("PATCH", `/admin/v1/keys/${issued.id}`, { plan: "nope" })).status).toBe(404);
      expect((await adminJson("PATCH", `/admin/v1/keys/key_aaaaaaaaaaaaaaaa`, { plan: "free" })).status).toBe(404);
      expect((await adminJson("PATCH", `/admin/v1/keys/${issued.id}`, { plan: 5 })).status).toBe(400);
    });

    test("POST …/revoke: the key object with revoked_at; refused within a second; revoking again changes nothing", async () => {
      const { body: issued } = await adminJson<{ id: string; key: string }>("POST", "/admin/v1/keys", { name: "leaving", plan: "standard" });
      expect((await lookup(issued.key)).status).toBe(200);
      const { status, body } = await adminJson<Record<string, unknown>>("POST", `/admin/v1/keys/${issued.id}/revoke`);
      expect(status).toBe(200);
      expect(body).toMatchObject({ id: issued.id, name: "leaving", units_this_period: 1 });
      expect(Date.parse(body.revoked_at as string)).toBeGreaterThan(Date.now() - 60_000);
      await withinASecond(async () => (await lookup(issued.key)).status === 401);
      // (Requests in that second may have been answered, and charged.)
      const again = await adminJson<Record<string, unknown>>("POST", `/admin/v1/keys/${issued.id}/revoke`);
      expect(again.status).toBe(200);
      expect(again.body.revoked_at).toBe(body.revoked_at);
      // A revoked key cannot be rotated or moved.
      const rotate = await adminJson<{ code: string }>("POST", `/admin/v1/keys/${issued.id}/rotate`);
      expect(rotate.status).toBe(400);
      expect(rotate.body.code).toBe("invalid_request");
      expect((await adminJson("PATCH", `/admin/v1/keys/${issued.id}`, { plan: "free" })).status).toBe(400);
    });

    test("an unknown key id is not_found as problem+json, on every key route", async () => {
      for (const [method, path, body] of [
        ["POST", "/admin/v1/keys/key_aaaaaaaaaaaaaaaa/rotate", undefined],
        ["POST", "/admin/v1/keys/key_aaaaaaaaaaaaaaaa/revoke", undefined],
        ["PATCH", "/admin/v1/keys/key_aaaaaaaaaaaaaaaa", { plan: "free" }],
      ] as const) {
        const response = await adminRequest(method, path, { body });
        expect(response.status).toBe(404);
        expect(response.headers.get("content-type")).toBe("application/problem+json");
        expect(await response.json()).toMatchObject({ type: "about:blank", title: "Not Found", status: 404, code: "not_found" });
      }
      expect((await adminJson("POST", "/admin/v1/keys", { name: "x", plan: "nope" })).status).toBe(404);
    });

    test("bodies: not JSON, the wrong shape, the wrong media type, too large", async () => {
      const notJson = await adminRequest("POST", "/admin/v1/keys", { body: "{name" });
      expect([notJson.status, ((await notJson.json()) as { code: string }).code]).toEqual([400, "invalid_json"]);
      for (const body of [{}, { name: "" }, { name: "x", extra: 1 }, { name: 5 }, []]) {
        const response = await adminRequest("POST", "/admin/v1/keys", { body });
        expect([response.status, ((await response.json()) as { code: string }).code]).toEqual([400, "invalid_request"]);
      }
      const text = await adminRequest("POST", "/admin/v1/keys", { body: JSON.stringify({ name: "x" }), contentType: "text/plain" });
      expect([text.status, ((await text.json()) as { code: string }).code]).toEqual([415, "unsupported_media_type"]);
      const large = await adminRequest("POST", "/admin/v1/keys", { body: JSON.stringify({ name: "x".repeat(70_000) }) });
      expect([large.status, ((await large.json()) as { code: string }).code]).toEqual([413, "payload_too_large"]);
    });

    test("a key name of spaces alone, or too long: 400 saying which", async () => {
      const blank = await adminJson("POST", "/admin/v1/keys", { name: "   " });
      expect(blank.status).toBe(400);
      expect((blank.body as { detail: string }).detail).toContain("this one is empty or only spaces");
      const long = await adminJson("POST", "/admin/v1/keys", { name: "y".repeat(201) });
      expect(long.status).toBe(400);
      expect((long.body as { detail: string }).detail).toContain("less or equal to 200");
    });

    test("routes: 404 for an unknown path, 405 with Allow for a wrong method", async () => {
      const unknown = await adminRequest("GET", "/admin/v1/nothing");
      expect([unknown.status, ((await unknown.json()) as { code: string }).code]).toEqual([404, "not_found"]);
      const wrong = await adminRequest("DELETE", "/admin/v1/keys");
      expect(wrong.status).toBe(405);
      expect(wrong.headers.get("allow")).toBe("GET, HEAD, POST");
      expect(((await wrong.json()) as { code: string }).code).toBe("method_not_allowed");
      expect(wrong.headers.get("x-request-id")).toBeTruthy();
    });

    test("the route is checked before the token: a wrong method without a token is 405, an unknown path 404", async () => {
      const wrong = await adminRequest("DELETE", "/admin/v1/keys", { bearer: null });
      expect([wrong.status, ((await wrong.json()) as { code: string }).code]).toEqual([405, "method_not_allowed"]);
      const unknown = await adminRequest("GET", "/admin/v1/nothing", { bearer: null });
      expect(unknown.status).toBe(404);
      const right = await adminRequest("GET", "/admin/v1/keys", { bearer: null });
      expect(right.status).toBe(401);
    });

    test("bad percent-encoding and control characters anywhere in admin input: 400 invalid_request, nothing written, never 500", async () => {
      const before = (await adminJson<{ keys: unknown[] }>("GET", "/admin/v1/keys")).body.keys.length;
      const plansBefore = (await adminJson<{ plans: unknown[] }>("GET", "/admin/v1/plans")).body.plans.length;
      const plan = { max_batch_size: 1, monthly_units: null, rate_limit: null };
      const attempts: [string, string, unknown][] = [
        ["PUT", "/admin/v1/plans/%zz", plan],
        ["PUT", "/admin/v1/plans/%", plan],
        ["PUT", "/admin/v1/plans/%E2%82", plan],
        ["PUT", "/admin/v1/plans/a%00b", plan],
        ["PUT", "/admin/v1/plans/a%0Ab", plan],
        ["PATCH", "/admin/v1/keys/%zz", { plan: "free" }],
        ["PATCH", "/admin/v1/keys/key_%00", { plan: "free" }],
        ["POST", "/admin/v1/keys/%E2%82/rotate", undefined],
        ["POST", "/admin/v1/keys/%00/revoke", undefined],
        ["POST", "/admin/v1/keys", { name: "a\u0000b" }],
        ["POST", "/admin/v1/keys", { name: "line\nbreak" }],
        ["POST", "/admin/v1/keys", { name: "ok", plan: "fr\u0000ee" }],
        ["PATCH", "/admin/v1/keys/key_aaaaaaaaaaaaaaaa", { plan: "\u0000" }],
        ["GET", "/admin/v1/usage?key=key_%00", undefined],
        ["GET", "/admin/v1/usage?key=%zz", undefined],
        ["GET", "/admin/v1/usage?from=2026-01-01%00", undefined],
        ["GET", "/admin/v1/usage?%00=1", undefined],
      ];
      for (const [method, path, body] of attempts) {
        const response = await adminRequest(method, path, { body });
        const problem = (await response.json()) as { code: string; detail: string };
        expect({ method, path, status: response.status, code: problem.code }).toEqual({ method, path, status: 400, code: "invalid_request" });
        expect(problem.detail).not.toContain("null");
      }
      expect((await adminJson<{ keys: unknown[] }>("GET", "/admin/v1/keys")).body.keys).toHaveLength(before);
      expect((await adminJson<{ plans: unknown[] }>("GET", "/admin/v1/plans")).body.plans).toHaveLength(plansBefore);
    });
  });

  describe("C1 control characters and lone surrogates", () => {
    test("anywhere in admin input (names, metadata and its member names, webhook URLs, notes, the query): 400 invalid_request, nothing written", async () => {
      const keysBefore = (await adminJson<{ keys: unknown[] }>("GET", "/admin/v1/keys")).body.keys.length;
      const hooksBefore = (await adminJson<{ webhooks: unknown[] }>("GET", "/admin/v1/webhooks")).body.webhooks.length;
      const correctionsBefore = (await adminJson<{ corrections: unknown[] }>("GET", "/admin/v1/corrections")).body.corrections.length;
      const attempts: [string, string, unknown][] = [
        ["POST", "/admin/v1/keys", { name: "a\u009b31mb" }],
        ["POST", "/admin/v1/keys", { name: "c1", metadata: { note: "x\u009b2J\u0085y" } }],
        ["POST", "/admin/v1/keys", { name: "c1", metadata: { ["te\u0085am"]: "a" } }],
        ["POST", "/admin/v1/keys", { name: "\ud800" }],
        ["POST", "/admin/v1/keys", { name: "ok", metadata: { tags: ["fine", "lone \udc00"] } }],
        ["POST", "/admin/v1/webhooks", { url: "http://127.0.0.1:9/\u009b2J", events: ["key.created"] }],
        ["PUT", "/admin/v1/corrections/198.51.100.0_24", { country_code: "FR", note: "a\u0085b" }],
        ["GET", "/admin/v1/usage?key=key_%C2%9B", undefined],
      ];
      for (const [method, path, body] of attempts) {
        const response = await adminRequest(method, path, { body });
        const problem = (await response.json()) as { code: string; detail: string };
        expect({ method, path, body, status: response.status, code: problem.code }).toEqual({ method, path, body, status: 400, code: "invalid_request" });
      }
      expect((await adminJson<{ keys: unknown[] }>("GET", "/admin/v1/keys")).body.keys).toHaveLength(keysBefore);
      expect((await adminJson<{ webhooks: unknown[] }>("GET", "/admin/v1/webhooks")).body.webhooks).toHaveLength(hooksBefore);
      expect((await adminJson<{ corrections: unknown[] }>("GET", "/admin/v1/corrections")).body.corrections).toHaveLength(correctionsBefore);
    });
  });

  describe("repeated query parameters", () => {
    test("a parameter given twice is 400 invalid_request on every admin route, not one of the two taken silently", async () => {
      for (const path of [
        "/admin/v1/usage?from=2026-01-01&from=2026-02-01",
        "/admin/v1/usage?key=key_aaaaaaaaaaaaaaaa&key=key_bbbbbbbbbbbbbbbb",
        "/admin/v1/audit?to=2026-01-01&to=2026-02-01",
        "/admin/v1/audit?limit=1&limit=2",
        "/admin/v1/asn?q=cloud&q=flare",
      ]) {
        const response = await adminRequest("GET", path);
        const problem = (await response.json()) as { code: string; detail: string };
        expect({ path, status: response.status, code: problem.code }).toEqual({ path, status: 400, code: "invalid_request" });
      }
      expect((await adminRequest("GET", "/admin/v1/audit?from=2026-01-01&to=2026-02-01")).status).toBe(200);
    });
  });

  describe("plans", () => {
    test("GET /admin/v1/plans: every plan, null for unlimited", async () => {
      const { status, body } = await adminJson<{ plans: unknown[] }>("GET", "/admin/v1/plans");
      expect(status).toBe(200);
      expect(body.plans).toContainEqual({ name: "free", max_batch_size: 100, monthly_units: 100_000, rate_limit: 10 });
      expect(body.plans).toContainEqual({ name: "unlimited", max_batch_size: 10_000, monthly_units: null, rate_limit: null });
    });

    test("PUT /admin/v1/plans/{name}: creates a plan, then changes it; every thread applies it within a second", async () => {
      const created = await adminJson("PUT", "/admin/v1/plans/gold", { max_batch_size: 2, monthly_units: 50, rate_limit: null });
      expect(created).toEqual({ status: 200, body: { name: "gold", max_batch_size: 2, monthly_units: 50, rate_limit: null } });
      const { body: issued } = await adminJson<{ id: string; key: string }>("POST", "/admin/v1/keys", { name: "golden", plan: "gold" });
      expect((await batch(issued.key, ["1.1.1.1", "8.8.8.8", "9.9.9.9"])).status).toBe(413);
      const changed = await adminJson("PUT", "/admin/v1/plans/gold", { max_batch_size: 3, monthly_units: null, rate_limit: 1000 });
      expect(changed.body).toEqual({ name: "gold", max_batch_size: 3, monthly_units: null, rate_limit: 1000 });
      await withinASecond(async () => (await batch(issued.key, ["1.1.1.1", "8.8.8.8", "9.9.9.9"])).status === 200);
      expect((await usageOf(issued.key)).plan).toEqual({ name: "gold", max_batch_size: 3, monthly_units: null, rate_limit: 1000 });
    });

    test("PUT refuses bad values and names, changing nothing", async () => {
      for (const body of [{ max_batch_size: 0, monthly_units: null, rate_limit: null }, { max_batch_size: 1, monthly_units: "5", rate_limit: null }, { max_batch_size: 1 }, { max_batch_size: 1.5, monthly_units: null, rate_limit: null }]) {
        const response = await adminJson<{ code: string }>("PUT", "/admin/v1/plans/gold", body);
        expect([response.status, response.body.code]).toEqual([400, "invalid_request"]);
      }
      const badName = await adminJson<{ code: string }>("PUT", "/admin/v1/plans/-bad", { max_batch_size: 1, monthly_units: null, rate_limit: null });
      expect([badName.status, badName.body.code]).toEqual([400, "invalid_request"]);
      expect((await adminJson<{ plans: { name: string }[] }>("GET", "/admin/v1/plans")).body.plans.map((plan) => plan.name)).not.toContain("-bad");
    });
  });

  describe("usage", () => {
    test("GET /admin/v1/usage: the last 30 days by default, zeros included, today's lookups counted; keys with use, most units first", async () => {
      const { body: small } = await adminJson<{ id: string; key: string }>("POST", "/admin/v1/keys", { name: "small-user", plan: "standard" });
      const { body: big } = await adminJson<{ id: string; key: string }>("POST", "/admin/v1/keys", { name: "big-user", plan: "standard" });
      const before = (await adminJson<{ days: { date: string; requests: number; units: number }[] }>("GET", "/admin/v1/usage")).body.days.at(-1)!;
      expect((await lookup(small.key)).status).toBe(200);
      expect((await batch(big.key, ["1.1.1.1", "8.8.8.8", "9.9.9.9", "1.0.0.1", "8.8.4.4"])).status).toBe(200);
      expect((await batch(big.key, ["1.1.1.1", "10.0.0.1"])).status).toBe(400);
      // Neither /v1/me nor /v1/usage is a lookup.
      expect((await fetch(`${server.url}/v1/me`, { headers: { authorization: `Bearer ${big.key}` } })).status).toBe(200);

      const { status, body } = await adminJson<{ from: string; to: string; days: { date: string; requests: number; units: number }[]; keys: { id: string; name: string; requests: number; units: number }[] }>(
        "GET",
        "/admin/v1/usage",
      );
      expect(status).toBe(200);
      expect(body.to).toBe(today());
      expect(body.days).toHaveLength(30);
      expect(body.days[0]!.date).toBe(body.from);
      expect(body.days.at(-1)).toEqual({ date: today(), requests: before.requests + 2, units: before.units + 6 });
      expect(body.days.slice(0, -1).every((day) => day.units === 0 && day.requests === 0)).toBe(true);
      const units = body.keys.map((key) => key.units);
      expect(units).toEqual([...units].sort((a, b) => b - a));
      expect(body.keys).toContainEqual({ id: big.id, name: "big-user", requests: 1, units: 5 });
      expect(body.keys).toContainEqual({ id: small.id, name: "small-user", requests: 1, units: 1 });

      const one = await adminJson<{ days: { date: string; requests: number; units: number }[]; keys: unknown[] }>("GET", `/admin/v1/usage?key=${big.id}`);
      expect(one.body.days.at(-1)).toEqual({ date: today(), requests: 1, units: 5 });
      expect(one.body.keys).toEqual([{ id: big.id, name: "big-user", requests: 1, units: 5 }]);

      const span = await adminJson<{ days: { date: string }[] }>("GET", "/admin/v1/usage?from=2026-02-27&to=2026-03-02");
      expect(span.body.days.map((day) => day.date)).toEqual(["2026-02-27", "2026-02-28", "2026-03-01", "2026-03-02"]);
    });

    test("bad spans are invalid_request; an unknown key is not_found", async () => {
      for (const query of ["from=2026-13-01", "to=yesterday", "from=2026-11-05&to=2026-11-01", "from=2025-01-01&to=2026-12-31", "color=blue"]) {
        const response = await adminJson<{ code: string }>("GET", `/admin/v1/usage?${query}`);
        expect({ query, status: response.status, code: response.body.code }).toEqual({ query, status: 400, code: "invalid_request" });
      }
      expect((await adminJson("GET", "/admin/v1/usage?from=2025-01-01&to=2026-02-04")).status).toBe(200);
      expect((await adminJson("GET", "/admin/v1/usage?key=key_aaaaaaaaaaaaaaaa")).status).toBe(404);
    });

    test("only `to`, within 29 days of 0001-01-01: the default span starts on 0001-01-01, the first day accepted as input", async () => {
      for (const [to, days] of [["0001-01-05", 5], ["0001-01-01", 1], ["0001-01-30", 30]] as const) {
        const usage = await adminJson<{ from: string; to: string; days: { date: string; units: number }[] }>("GET", `/admin/v1/usage?to=${to}`);
        expect({ to, status: usage.status, from: usage.body.from, first: usage.body.days[0]?.date, days: usage.body.days.length }).toEqual({ to, status: 200, from: "0001-01-01", first: "0001-01-01", days });
        const audit = await adminJson<{ entries: unknown[] }>("GET", `/admin/v1/audit?to=${to}`);
        expect({ to, status: audit.status, entries: audit.body.entries }).toEqual({ to, status: 200, entries: [] });
      }
      expect((await adminJson<{ from: string }>("GET", "/admin/v1/usage?to=0001-01-31")).body.from).toBe("0001-01-02");
    });

    test("`to` 9999-12-31, the last day accepted as input: answered", async () => {
      const usage = await adminJson<{ days: { date: string }[] }>("GET", "/admin/v1/usage?to=9999-12-31");
      expect({ status: usage.status, last: usage.body.days.at(-1)?.date }).toEqual({ status: 200, last: "9999-12-31" });
      const audit = await adminJson<{ entries: unknown[] }>("GET", "/admin/v1/audit?to=9999-12-31");
      expect({ status: audit.status, entries: audit.body.entries }).toEqual({ status: 200, entries: [] });
    });
  });

  describe("key controls, rotation with a grace, read-only tokens and the audit log (CONTRACT §16)", () => {
    test("controls set at creation and by PATCH: written canonically, applied on the public port, refused values change nothing", async () => {
      const future = new Date(Date.now() + 86_400_000).toISOString();
      const created = await adminJson<{ id: string; key: string }>("POST", "/admin/v1/keys", {
        name: "guarded",
        allowed_cidrs: ["203.0.113.7/24"],
        allowed_origins: ["https://App.Example.com/"],
        expires_at: future,
        metadata: { team: "maps" },
      });
      expect(created.status).toBe(201);
      const listed = (await adminJson<{ keys: Record<string, unknown>[] }>("GET", "/admin/v1/keys")).body.keys.find((key) => key.id === created.body.id)!;
      expect(listed).toMatchObject({ allowed_cidrs: ["203.0.113.0/24"], allowed_origins: ["https://app.example.com"], expires_at: future, metadata: { team: "maps" } });
      // The tests' requests come from 127.0.0.1, outside the allowlist: refused at once (a new key), never charged.
      const refused = await lookup(created.body.key);
      expect([refused.status, ((await refused.json()) as { code: string }).code]).toEqual([403, "address_not_allowed"]);
      const patched = await adminJson<Record<string, unknown>>("PATCH", `/admin/v1/keys/${created.body.id}`, { allowed_cidrs: ["127.0.0.0/8", "::1"], metadata: null });
      expect(patched.body).toMatchObject({ allowed_cidrs: ["127.0.0.0/8", "::1/128"], allowed_origins: ["https://app.example.com"], metadata: {} });
      await withinASecond(async () => (await lookup(created.body.key)).status === 200);
      const origin = await fetch(`${server.url}/v1/lookup`, {
        method: "POST",
        headers: { authorization: `Bearer ${created.body.key}`, "content-type": "application/json", origin: "https://evil.example" },
        body: '{"ip":"1.1.1.1"}',
      });
      expect([origin.status, ((await origin.json()) as { code: string }).code]).toEqual([403, "origin_not_allowed"]);
      for (const body of [{ expires_at: "2001-01-01T00:00:00Z" }, { expires_at: "tomorrow" }, { allowed_cidrs: ["10.0.0.0/33"] }, { allowed_origins: ["ftp://x.example"] }, { metadata: { pad: "x".repeat(1100) } }, { metadata: [1] }]) {
        const response = await adminJson<{ code: string }>("PATCH", `/admin/v1/keys/${created.body.id}`, body);
        expect({ body, status: response.status, code: response.body.code }).toEqual({ body, status: 400, code: "invalid_request" });
      }
      const after = (await adminJson<{ keys: Record<string, unknown>[] }>("GET", "/admin/v1/keys")).body.keys.find((key) => key.id === created.body.id)!;
      expect(after).toMatchObject({ allowed_cidrs: ["127.0.0.0/8", "::1/128"], expires_at: future });
      expect((await usageOf(created.body.key)).units.used).toBe(1);
    });

    test('POST …/rotate {"grace":"1h"}: the new secret at once, the old one still working on every thread, grace_until in the answer', async () => {
      const { body: issued } = await adminJson<{ id: string; key: string }>("POST", "/admin/v1/keys", { name: "graceful", plan: "standard" });
      const started = Date.now();
      const { status, body: rotated } = await adminJson<Record<string, string>>("POST", `/admin/v1/keys/${issued.id}/rotate`, { grace: "1h" });
      expect(status).toBe(200);
      expect(Object.keys(rotated).sort()).toEqual(["grace_until", "id", "key", "name", "plan"]);
      expect(Math.abs(Date.parse(rotated.grace_until!) - (started + 3_600_000))).toBeLessThan(60_000);
      expect((await lookup(rotated.key!)).status).toBe(200);
      await Bun.sleep(1100);
      for (let i = 0; i < 6; i++) expect([(await lookup(issued.key)).status, (await lookup(rotated.key!)).status]).toEqual([200, 200]);
      const bad = await adminJson<{ code: string }>("POST", `/admin/v1/keys/${issued.id}/rotate`, { grace: "31d" });
      expect([bad.status, bad.body.code]).toEqual([400, "invalid_request"]);
    });

    test("a read-only admin token reads everything and changes nothing: 403 read_only_token after the route and token checks", async () => {
      const made = cli(["admin", "create", "--name", "auditor", "--read-only", "--json"], { IPLOOKUP_STATE: state });
      expect(made.code).toBe(0);
      const reader = (JSON.parse(made.stdout) as { token: string; read_only: boolean });
      expect(reader.read_only).toBe(true);
      for (const path of ["/admin/v1/keys", "/admin/v1/plans", "/admin/v1/usage", "/admin/v1/status", "/admin/v1/audit"]) {
        expect({ path, status: (await adminRequest("GET", path, { bearer: reader.token })).status }).toEqual({ path, status: 200 });
      }
      expect(await (await adminRequest("GET", "/admin/v1/token", { bearer: reader.token })).json()).toMatchObject({ name: "auditor", read_only: true });
      expect(await (await adminRequest("GET", "/admin/v1/token")).json()).toMatchObject({ name: "ops", read_only: false });
      const { body: target } = await adminJson<{ id: string }>("POST", "/admin/v1/keys", { name: "untouchable" });
      const before = await (await adminRequest("GET", "/admin/v1/keys")).text();
      for (const [method, path, body] of [
        ["POST", "/admin/v1/keys", { name: "nope" }],
        ["PATCH", `/admin/v1/keys/${target.id}`, { plan: "unlimited" }],
        ["POST", `/admin/v1/keys/${target.id}/rotate`, undefined],
        ["POST", `/admin/v1/keys/${target.id}/revoke`, undefined],
        ["PUT", "/admin/v1/plans/free", { max_batch_size: 1, monthly_units: null, rate_limit: null }],
      ] as const) {
        const response = await adminRequest(method, path, { bearer: reader.token, body });
        expect({ method, path, status: response.status, code: ((await response.json()) as { code: string }).code }).toEqual({ method, path, status: 403, code: "read_only_token" });
      }
      // The route and the token come first.
      expect((await adminRequest("POST", "/admin/v1/nowhere", { bearer: reader.token })).status).toBe(404);
      expect((await adminRequest("DELETE", "/admin/v1/keys", { bearer: reader.token })).status).toBe(405);
      expect((await adminRequest("POST", "/admin/v1/keys", { bearer: null, body: { name: "x" } })).status).toBe(401);
      expect(await (await adminRequest("GET", "/admin/v1/keys")).text()).toBe(before);
    });

    test("a webhook's URL, whose path and query may hold the receiver's secret: whole for a read-write token and the CLI, its origin and /… for a read-only token", async () => {
      const url = "http://127.0.0.1:9/hook/path-sekret?token=query-sekret";
      const env = { IPLOOKUP_STATE: state };
      const reader = (JSON.parse(cli(["admin", "create", "--name", "hook-reader", "--read-only", "--json"], env).stdout) as { token: string }).token;
      const created = await adminJson<{ id: string; url: string }>("POST", "/admin/v1/webhooks", { url, events: ["data.updated"] });
      expect([created.status, created.body.url]).toEqual([201, url]);
      const { id } = created.body;
      const listed = async (bearer?: string) => {
        const response = await adminRequest("GET", "/admin/v1/webhooks", { bearer });
        expect(response.status).toBe(200);
        return response.text();
      };
      const urlIn = (text: string) => (JSON.parse(text) as { webhooks: { id: string; url: string }[] }).webhooks.find((webhook) => webhook.id === id)?.url;
      expect(urlIn(await listed())).toBe(url);
      const read = await listed(reader);
      expect(urlIn(read)).toBe("http://127.0.0.1:9/…");
      const deliveries = await adminRequest("GET", `/admin/v1/webhooks/${id}/deliveries`, { bearer: reader });
      expect(deliveries.status).toBe(200);
      for (const text of [read, await deliveries.text()]) expect(text).not.toContain("sekret");
      // The command line is an operator on the machine, who manages the URL.
      expect((JSON.parse(cli(["webhooks", "list", "--json"], env).stdout) as { id: string; url: string }[]).find((webhook) => webhook.id === id)?.url).toBe(url);
      expect((await adminRequest("DELETE", `/admin/v1/webhooks/${id}`)).status).toBe(204);

      // The audit log, which read-only tokens read, records the shown form alone.
      const audit = await adminRequest("GET", `/admin/v1/audit?from=${today()}&to=${today()}`, { bearer: reader });
      expect(audit.status).toBe(200);
      const text = await audit.text();
      const entries = (JSON.parse(text) as { entries: { action: string; target: string; changes: unknown }[] }).entries.filter((entry) => entry.target === id);
      expect(entries.map((entry) => [entry.action, entry.changes])).toEqual([
        ["webhook.removed", { url: { from: "http://127.0.0.1:9/…", to: null }, events: { from: ["data.updated"], to: null } }],
        ["webhook.created", { url: { from: null, to: "http://127.0.0.1:9/…" }, events: { from: null, to: ["data.updated"] } }],
      ]);
      const printed = cli(["audit", "--json", "--from", today(), "--to", today()], env);
      expect(printed.code).toBe(0);
      for (const shown of [text, printed.stdout]) expect(shown).not.toContain("sekret");
    });

    test("an entry recorded before the audit log shortened a webhook's URL (written straight into the state) is read shortened: the admin API and iplookup audit", async () => {
      const at = new Date().toISOString();
      const changes = JSON.stringify({ url: { from: null, to: "https://hooks.slack.com/services/T0/B0/old-sekret" }, events: { from: null, to: ["key.created"] } });
      if (/^postgres(ql)?:\/\//.test(state)) {
        const sql = new SQL(state, { max: 1 });
        await sql`INSERT INTO audit_log (at, actor, action, target, changes) VALUES (${at}, 'cli', 'webhook.created', 'wh_oldentryoldentry', ${changes})`;
        await sql.close();
      } else {
        const db = new Database(state);
        db.run("PRAGMA busy_timeout = 5000");
        db.run("INSERT INTO audit_log (at, actor, action, target, changes) VALUES (?, 'cli', 'webhook.created', 'wh_oldentryoldentry', ?)", [at, changes]);
        db.close();
      }
      const env = { IPLOOKUP_STATE: state };
      const reader = (JSON.parse(cli(["admin", "create", "--name", "old-entry-reader", "--read-only", "--json"], env).stdout) as { token: string }).token;
      const span = `from=${at.slice(0, 10)}&to=${at.slice(0, 10)}`;
      for (const bearer of [reader, token]) {
        const text = await (await adminRequest("GET", `/admin/v1/audit?${span}`, { bearer })).text();
        expect(text).not.toContain("sekret");
        const old = (JSON.parse(text) as { entries: { target: string; changes: unknown }[] }).entries.find((entry) => entry.target === "wh_oldentryoldentry");
        expect(old?.changes).toEqual({ url: { from: null, to: "https://hooks.slack.com/…" }, events: { from: null, to: ["key.created"] } });
      }
      for (const args of [["--json"], []]) {
        const printed = cli(["audit", ...args, "--from", at.slice(0, 10), "--to", at.slice(0, 10)], env);
        expect(printed.code).toBe(0);
        expect(printed.stdout).toContain("wh_oldentryoldentry");
        expect(printed.stdout).not.toContain("sekret");
      }
    });

    test("the audit log: every change by the API (its token's id) and the CLI (cli), newest first, the same in iplookup audit, never a secret", async () => {
      const secrets: string[] = [token];
      const { body: me } = await adminJson<{ id: string }>("GET", "/admin/v1/token");
      const { body: issued } = await adminJson<{ id: string; key: string }>("POST", "/admin/v1/keys", { name: "audited", metadata: { owner: "ops" } });
      secrets.push(issued.key);
      await adminJson("PATCH", `/admin/v1/keys/${issued.id}`, { plan: "standard", allowed_origins: ["https://a.example"] });
      const { body: rotated } = await adminJson<{ key: string }>("POST", `/admin/v1/keys/${issued.id}/rotate`, { grace: "5m" });
      secrets.push(rotated.key);
      await adminJson("PUT", "/admin/v1/plans/audited-plan", { max_batch_size: 7, monthly_units: null, rate_limit: 3 });
      await adminJson("POST", `/admin/v1/keys/${issued.id}/revoke`);
      const env = { IPLOOKUP_STATE: state };
      const made = JSON.parse(cli(["keys", "create", "--name", "by-cli", "--json"], env).stdout) as { id: string; key: string };
      secrets.push(made.key);
      const again = JSON.parse(cli(["keys", "rotate", made.id, "--json"], env).stdout) as { key: string };
      secrets.push(again.key);
      const tokenMade = JSON.parse(cli(["admin", "create", "--name", "temp", "--json"], env).stdout) as { id: string; token: string };
      secrets.push(tokenMade.token);
      expect(cli(["admin", "revoke", tokenMade.id], env).code).toBe(0);

      const { status, body } = await adminJson<{ entries: { at: string; actor: string; action: string; target: string; changes: Record<string, unknown> }[] }>("GET", `/admin/v1/audit?from=${today()}&to=${today()}`);
      expect(status).toBe(200);
      const mine = body.entries.filter((entry) => entry.target === issued.id || entry.target === made.id || entry.target === tokenMade.id || entry.target === "plan:audited-plan");
      expect(mine.map((entry) => [entry.actor, entry.action, entry.target])).toEqual([
        ["cli", "admin_token.revoked", tokenMade.id],
        ["cli", "admin_token.created", tokenMade.id],
        ["cli", "key.rotated", made.id],
        ["cli", "key.created", made.id],
        [me.id, "key.revoked", issued.id],
        [me.id, "plan.created", "plan:audited-plan"],
        [me.id, "key.rotated", issued.id],
        [me.id, "key.updated", issued.id],
        [me.id, "key.created", issued.id],
      ]);
      expect(mine.find((entry) => entry.action === "key.updated")!.changes).toEqual({ plan: { from: "free", to: "standard" }, allowed_origins: { from: null, to: ["https://a.example"] } });
      const times = body.entries.map((entry) => entry.at);
      expect([...times].sort().reverse()).toEqual(times);
      // The CLI prints the same entries.
      const printed = JSON.parse(cli(["audit", "--json", "--from", today(), "--to", today()], env).stdout) as { entries: unknown[] };
      expect(printed).toEqual(body);
      // No secret, and no hash of one, anywhere in the log.
      const text = JSON.stringify(body);
      for (const secret of secrets) {
        expect(text).not.toContain(secret);
        expect(text).not.toContain(new Bun.CryptoHasher("sha256").update(secret).digest("hex"));
      }
      expect(text).not.toMatch(/ipla?_[A-Za-z0-9_-]{20}|[0-9a-f]{64}/);
      // A bad span is refused.
      expect((await adminJson("GET", "/admin/v1/audit?from=2026-02-30")).status).toBe(400);
      expect((await adminJson("GET", `/admin/v1/audit?from=${today()}&to=2000-01-01`)).status).toBe(400);
    });

    test("the audit log a page at a time: `next` and `before` reach the oldest entry of a day that holds more than a page, and a change made meanwhile moves no page", async () => {
      type Page = { entries: { at: string; action: string; target: string; changes: Record<string, { to?: unknown }> }[]; next: string | null };
      const { body: oldest } = await adminJson<{ id: string }>("POST", "/admin/v1/keys", { name: "oldest-of-the-day", plan: "free" });
      // 1,040 plan changes after it, each with a value of its own (a change that changes nothing records nothing).
      const EDITS = 1040;
      for (let first = 0; first < EDITS; first += 16) {
        const sent = await Promise.all(
          Array.from({ length: 16 }, (_, i) => adminRequest("PUT", "/admin/v1/plans/churn", { body: { max_batch_size: 1, monthly_units: first + i + 1, rate_limit: null } })),
        );
        expect(sent.map((response) => response.status)).toEqual(Array(16).fill(200));
      }
      // Yesterday and today: the changes may have begun before 00:00 UTC and the pages be read after it.
      const until = today();
      const span = `from=${new Date(Date.parse(until) - 86_400_000).toISOString().slice(0, 10)}&to=${until}`;
      const first = await adminJson<Page>("GET", `/admin/v1/audit?${span}`);
      expect(first.status).toBe(200);
      expect(first.body.entries).toHaveLength(1000);
      expect(first.body.next).toEqual(expect.any(String));
      expect(first.body.entries.some((entry) => entry.target === oldest.id)).toBe(false);
      // A change made between two pages is newer than both: the next page starts where the first ended.
      expect((await adminRequest("PUT", "/admin/v1/plans/churn", { body: { max_batch_size: 2, monthly_units: 1, rate_limit: null } })).status).toBe(200);
      const pages = [first.body];
      while (pages[pages.length - 1]!.next !== null) {
        const { status, body } = await adminJson<Page>("GET", `/admin/v1/audit?${span}&limit=1000&before=${encodeURIComponent(pages[pages.length - 1]!.next!)}`);
        expect(status).toBe(200);
        pages.push(body);
        expect(pages.length).toBeLessThan(10);
      }
      const all = pages.flatMap((page) => page.entries);
      const edits = all.filter((entry) => entry.target === "plan:churn" && entry.action !== "plan.created").map((entry) => entry.changes.monthly_units?.to);
      // Every edit once, none twice, none missing; the one made meanwhile is not among them.
      expect(edits).toHaveLength(EDITS - 1);
      expect(new Set(edits).size).toBe(EDITS - 1);
      expect(all.filter((entry) => entry.target === "plan:churn" && entry.action === "plan.created")).toHaveLength(1);
      const times = all.map((entry) => entry.at);
      expect([...times].sort().reverse()).toEqual(times);
      // The key created before them all is reached, on the last page.
      expect(pages[pages.length - 1]!.entries.map((entry) => [entry.action, entry.target])).toContainEqual(["key.created", oldest.id]);
      // A page of one, and a cursor the log never gave.
      const one = await adminJson<Page>("GET", `/admin/v1/audit?${span}&limit=1&before=${encodeURIComponent(first.body.next!)}`);
      expect(one.body.entries).toEqual([pages[1]!.entries[0]!]);
      for (const before of ["yesterday", "2026-02-30T00:00:00.000Z_5", "2026-01-01T00:00:00Z_5"]) {
        const refused = await adminJson<{ status: number; code: string; detail: string }>("GET", `/admin/v1/audit?${span}&before=${encodeURIComponent(before)}`);
        expect({ before, status: refused.status, code: refused.body.code }).toEqual({ before, status: 400, code: "invalid_request" });
        expect(refused.body.detail).toContain("before");
      }
    }, 60_000);
  });

  test("GET /admin/v1/status: version, uptime, workers and the data set's sources", async () => {
    const { status, body } = await adminJson<{ version: string; uptime_seconds: number; workers: number; data: { data_version: string; built_at: string; sources: Record<string, unknown>[] } }>(
      "GET",
      "/admin/v1/status",
    );
    expect(status).toBe(200);
    expect(Object.keys(body).sort()).toEqual(["data", "uptime_seconds", "version", "workers"]);
    expect(body.workers).toBe(2);
    expect(Number.isInteger(body.uptime_seconds)).toBe(true);
    const ready = (await (await fetch(`${server.url}/readyz`)).json()) as { data_version: string };
    expect(body.data.data_version).toBe(ready.data_version);
    expect(body.data.sources.map((source) => source.license)).toEqual(["CC BY 4.0", "CC0", "MIT (part of iplookup)"]);
    expect(body.data.sources[0]).toMatchObject({ origin: "@ip-location-db/asn", attribution: expect.stringContaining("RouteViews") });
  });

  test("the console and the admin OpenAPI document are served by the admin listener alone; the public port answers 404", async () => {
    const page = await fetch(`${admin}/console`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(await page.text()).toContain("/console/console.js");
    for (const [path, type] of [["/console/console.js", "text/javascript"], ["/console/console.css", "text/css"], ["/console/favicon.svg", "image/svg+xml"], ["/admin/openapi.json", "application/json"]] as const) {
      const response = await fetch(`${admin}${path}`);
      expect({ path, status: response.status }).toEqual({ path, status: 200 });
      expect(response.headers.get("content-type")).toStartWith(type);
    }
    for (const path of ["/admin/v1/keys", "/admin/v1/status", "/console", "/console/console.js", "/admin/openapi.json"]) {
      const response = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
      expect({ path, status: response.status }).toEqual({ path, status: 404 });
      expect(((await response.json()) as { code: string }).code).toBe("not_found");
    }
    // And the admin listener serves nothing of the public API.
    expect((await fetch(`${admin}/v1/me`)).status).toBe(404);
  });

  test("the access log names the admin token's id, never a secret", async () => {
    await adminJson("GET", "/admin/v1/plans");
    await Bun.sleep(100);
    const lines = server.stderr().split("\n").filter((line) => line.includes('"admin request"'));
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.some((line) => /"admin_token_id":"adm_[a-z2-7]{16}"/.test(line))).toBe(true);
    expect(server.stderr()).not.toContain(token);
    expect(server.stderr()).not.toMatch(/ipl_[A-Za-z0-9_-]{43}/);
  });
}

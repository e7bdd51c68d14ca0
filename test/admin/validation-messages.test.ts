import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { adminOpenApiDocument } from "../../src/admin/admin-openapi.ts";
import { adminAppOf, makeTestApp, type TestApp } from "../support/test-app.ts";

/**
 * A body of the wrong shape is 400 invalid_request whose detail names the place and what
 * is wrong there. A nullable member (allowed_cidrs, expires_at, monthly_units…) holding a
 * value of the right kind names the fault inside it, not only "array or null".
 */
let t: TestApp;
let token: string;
let keyId: string;
beforeAll(async () => {
  t = await makeTestApp();
  token = (await t.store.createAdminToken("ops")).secret;
  keyId = (await t.store.createKey("existing", "free")).key.id;
});
afterAll(() => t.close());

const admin = () => adminAppOf(t);
async function detailOf(method: string, path: string, body: unknown): Promise<string> {
  const response = await admin().handle(
    new Request(`http://admin${path}`, { method, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(body) }),
  );
  const problem = (await response.json()) as { code: string; detail: string };
  expect([response.status, problem.code]).toEqual([400, "invalid_request"]);
  return problem.detail;
}

describe("the admin API's validation messages", () => {
  const plan = { max_batch_size: 100, monthly_units: 1000, rate_limit: 10 };
  const cases: Array<[string, string, () => string, unknown, string]> = [
    ["an allowlist entry that is not a string", "POST", () => "/admin/v1/keys", { name: "k", allowed_cidrs: ["10.0.0.0/8", 1] }, "/allowed_cidrs/1: Expected string but found a number: 1"],
    ["an allowlist too long", "POST", () => "/admin/v1/keys", { name: "k", allowed_cidrs: Array(101).fill("10.0.0.1") }, "/allowed_cidrs: Expected array length to be less or equal to 100"],
    ["an origin too long", "PATCH", () => `/admin/v1/keys/${keyId}`, { allowed_origins: [`https://${"a".repeat(300)}.example`] }, "/allowed_origins/0: Expected string length less or equal to 300"],
    ["an expiry too long", "POST", () => "/admin/v1/keys", { name: "k", expires_at: "2".repeat(65) }, "/expires_at: Expected string length less or equal to 64"],
    ["units that are not whole", "PUT", () => "/admin/v1/plans/p", { ...plan, monthly_units: 1.5 }, "/monthly_units: Expected integer"],
    ["units below one", "PUT", () => "/admin/v1/plans/p", { ...plan, monthly_units: 0 }, "/monthly_units: Expected integer to be greater or equal to 1"],
    ["a rate past the largest", "PUT", () => "/admin/v1/plans/p", { ...plan, rate_limit: 2 ** 31 }, "/rate_limit: Expected integer to be less or equal to 2147483647"],
    // A value of no member's kind: the union's own message, which lists the kinds.
    ["an allowlist that is a string", "POST", () => "/admin/v1/keys", { name: "k", allowed_cidrs: "10.0.0.0/8" }, "/allowed_cidrs: Property 'allowed_cidrs' should be one of: 'array', 'null'"],
    ["units given as text", "PUT", () => "/admin/v1/plans/p", { ...plan, monthly_units: "1000" }, "/monthly_units: Property 'monthly_units' should be one of: 'integer', 'null'"],
    // A pattern's own message, not the pattern.
    ["a correction's country in lower case", "PUT", () => "/admin/v1/corrections/198.51.100.0_24", { country_code: "de" }, '/country_code: expected an ISO 3166-1 alpha-2 country code (upper case, like "DE")'],
    ["a member that is not a nullable one", "POST", () => "/admin/v1/keys", { name: 5 }, "/name: Expected string but found a number: 5"],
  ];
  for (const [what, method, path, body, detail] of cases) {
    test(`${what}: ${detail}`, async () => {
      expect(await detailOf(method, path(), body)).toBe(detail);
    });
  }

  test("a query's pattern is named by what it wants: /admin/v1/usage?from=nov, /admin/v1/audit?limit=abc", async () => {
    const query = async (path: string) => {
      const response = await admin().handle(new Request(`http://admin${path}`, { headers: { authorization: `Bearer ${token}` } }));
      return [response.status, ((await response.json()) as { detail: string }).detail];
    };
    expect(await query("/admin/v1/usage?from=nov")).toEqual([400, "/from: expected a day written YYYY-MM-DD"]);
    expect(await query("/admin/v1/audit?to=2026-1-1")).toEqual([400, "/to: expected a day written YYYY-MM-DD"]);
    expect(await query("/admin/v1/audit?limit=abc")).toEqual([400, "/limit: expected a whole number from 1 to 10000"]);
  });

  test("the messages stay out of the OpenAPI document, which is JSON Schema", () => {
    const document = JSON.stringify(adminOpenApiDocument("t"));
    expect(document).toContain('"pattern":"^[A-Z]{2}$"');
    expect(document).not.toContain("expected a day written");
    expect(document).not.toContain("expected an ISO 3166-1");
  });

  test("the document states correction texts' limits in characters, as JSON Schema counts them", () => {
    const schemas = adminOpenApiDocument("t").components.schemas as unknown as Record<string, { properties: Record<string, { anyOf: { maxLength?: number }[] }> }>;
    const limitOf = (schema: string, field: string) => schemas[schema]!.properties[field]!.anyOf[0]!.maxLength;
    expect([limitOf("PutCorrectionRequest", "as_name"), limitOf("PutCorrectionRequest", "city"), limitOf("PutCorrectionRequest", "note")]).toEqual([200, 200, 500]);
    expect(JSON.stringify(adminOpenApiDocument("t"))).not.toContain("maxCharacters");
  });

  test("nothing was written by any of them", async () => {
    expect((await t.store.listKeys()).map((key) => key.name)).toEqual(["existing"]);
    expect((await t.store.listPlans()).map((plan) => plan.name)).not.toContain("p");
    expect(await t.store.listCorrections()).toEqual([]);
  });
});

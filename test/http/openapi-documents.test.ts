import { afterAll, describe, expect, test } from "bun:test";
import { Validator } from "@seriousme/openapi-schema-validator";
import { Value } from "@sinclair/typebox/value";
import openapiTS, { astToString } from "openapi-typescript";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { adminOpenApiDocument } from "../../src/admin/admin-openapi.ts";
import { AdminKeyList, AdminPlanList, AdminStatus, AdminTokenInfo, AdminUsage, AuditList, IssuedKey } from "../../src/admin/admin-schemas.ts";
import { createAdminApp } from "../../src/admin/admin-app.ts";
import { openApiDocument } from "../../src/http/openapi.ts";
import { BatchResultSchema, LookupResultSchema, UsageSchema } from "../../src/http/schemas.ts";
import { defaultIndex } from "../support/default-data.ts";
import { makeTestApp } from "../support/test-app.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-openapi-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const documents = { public: openApiDocument("1.2.3"), admin: adminOpenApiDocument("1.2.3") };

type Operation = { responses: Record<string, { headers?: Record<string, unknown>; content?: Record<string, { schema: unknown }> }> };
function operations(doc: { paths: Record<string, Record<string, Operation>> }) {
  return Object.entries(doc.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, operation]) => ({ path, method, operation })));
}

/** Every `type` a schema (and its sub-schemas) names for integers must be integer alone. */
function integerLike(schema: unknown, where: string, found: string[]): void {
  if (Array.isArray(schema)) return schema.forEach((item, i) => integerLike(item, `${where}/${i}`, found));
  if (schema === null || typeof schema !== "object") return;
  const record = schema as Record<string, unknown>;
  if (record.format === "integer" || record.format === "numeric") found.push(where);
  for (const [key, value] of Object.entries(record)) integerLike(value, `${where}/${key}`, found);
}

describe("both OpenAPI documents", () => {
  for (const [name, doc] of Object.entries(documents)) {
    test(`${name}: a valid OpenAPI 3.1 document`, async () => {
      const validator = new Validator();
      const result = await validator.validate(JSON.parse(JSON.stringify(doc)));
      expect(result.errors ?? []).toEqual([]);
      expect(result.valid).toBe(true);
      expect(validator.version).toBe("3.1");
    });

    test(`${name}: integers are integers, never "string or integer"`, () => {
      const found: string[] = [];
      integerLike(doc, "#", found);
      expect(found).toEqual([]);
    });

    test(`${name}: every answer has X-Request-Id; a wrong method is 405 with Allow; an unknown path is documented as 404`, () => {
      for (const { path, method, operation } of operations(doc as never)) {
        for (const [status, response] of Object.entries(operation.responses)) {
          expect({ path, method, status, header: response.headers?.["X-Request-Id"] }).toEqual({ path, method, status, header: { $ref: "#/components/headers/X-Request-Id" } });
        }
        expect({ path, method, allow: operation.responses["405"]?.headers?.Allow }).toEqual({ path, method, allow: { $ref: "#/components/headers/Allow" } });
      }
      expect((doc.components.responses.NotFound as { description: string }).description).toContain("not_found");
    });
  }
});

describe("the public document", () => {
  const doc = documents.public;
  const codesOf = (operation: Operation, status: string) =>
    ((operation.responses[status]?.content?.["application/problem+json"]?.schema as { allOf: { properties?: { code?: { enum: string[] } } }[] } | undefined)?.allOf[1]?.properties?.code?.enum ?? []);

  test("asn, max_batch_size, monthly_units, rate_limit and units.* are integers (or null)", () => {
    const schemas = doc.components.schemas as unknown as Record<string, { properties: Record<string, unknown> }>;
    expect(schemas.LookupResult!.properties.asn).toEqual({ anyOf: [{ type: "integer" }, { type: "null" }] });
    const usage = schemas.Usage!.properties as Record<string, { properties: Record<string, unknown> }>;
    expect(usage.plan!.properties.max_batch_size).toEqual({ type: "integer" });
    expect(usage.plan!.properties.monthly_units).toEqual({ anyOf: [{ type: "integer" }, { type: "null" }] });
    expect(usage.plan!.properties.rate_limit).toEqual({ anyOf: [{ type: "integer" }, { type: "null" }] });
    expect(usage.units!.properties.used).toEqual({ type: "integer" });
    expect(usage.units!.properties.remaining).toEqual({ anyOf: [{ type: "integer" }, { type: "null" }] });
  });

  test("quota_exceeded only on the routes that charge; 503 store_unavailable on every /v1 route", () => {
    for (const { path, method, operation } of operations(doc as never)) {
      const charges = path === "/v1/lookup" || path === "/v1/lookup/batch" || path.startsWith("/v1/asn");
      expect({ path, method, quota: codesOf(operation, "429").includes("quota_exceeded") }).toEqual({ path, method, quota: charges });
      if (path.startsWith("/v1/")) {
        expect({ path, codes: codesOf(operation, "429") }).toEqual({ path, codes: charges ? ["rate_limited", "quota_exceeded"] : ["rate_limited"] });
        expect(codesOf(operation, "503")).toEqual(["store_unavailable"]);
        expect(codesOf(operation, "401")).toEqual(["missing_key", "invalid_key", "key_expired"]);
        expect(codesOf(operation, "403")).toEqual(["address_not_allowed", "origin_not_allowed"]);
      }
    }
    expect(JSON.stringify(doc.paths["/v1/me"])).not.toContain("quota_exceeded");
    expect(codesOf(doc.paths["/v1/lookup/batch"].post as never, "413")).toEqual(["payload_too_large", "batch_too_large"]);
    expect(codesOf(doc.paths["/v1/lookup"].post as never, "413")).toEqual(["payload_too_large"]);
  });

  test("a lookup's answer documents X-Units-Consumed, X-Units-Remaining, X-Data-Version and X-Request-Id", () => {
    for (const operation of [doc.paths["/v1/lookup"].post, doc.paths["/v1/lookup/batch"].post, doc.paths["/v1/asn/{asn}"].get, doc.paths["/v1/asn"].get]) {
      const headers = operation.responses["200"].headers;
      expect(Object.keys(headers).sort()).toEqual(["X-Data-Version", "X-Request-Id", "X-Units-Consumed", "X-Units-Remaining"]);
    }
    expect(doc.components.headers["X-Units-Remaining"]).not.toHaveProperty("required");
    expect(doc.components.headers["X-Units-Consumed"].schema).toEqual({ type: "integer", minimum: 0 });
  });

  test("LookupResult documents privacy: six members in the contract's order, each signal true, false or null, service text or null", () => {
    const schemas = doc.components.schemas as unknown as Record<string, { properties: Record<string, unknown>; required: string[] }>;
    const lookupResult = schemas.LookupResult!;
    expect(lookupResult.required).toContain("privacy");
    const privacy = lookupResult.properties.privacy as { properties: Record<string, { anyOf: unknown[] }>; required: string[]; additionalProperties: boolean };
    expect(Object.keys(privacy.properties)).toEqual(["hosting", "tor", "vpn", "relay", "proxy", "service"]);
    expect(privacy.required).toEqual(["hosting", "tor", "vpn", "relay", "proxy", "service"]);
    expect(privacy.additionalProperties).toBe(false);
    expect(privacy.properties.tor!.anyOf.map((schema) => (schema as { type: string }).type)).toEqual(["boolean", "null"]);
    expect(privacy.properties.service!.anyOf.map((schema) => (schema as { type: string }).type)).toEqual(["string", "null"]);
    const result = { ip: "1.1.1.1", version: 4, found: true, network: "1.1.1.0/24", asn: 13335, as_name: "Cloudflare, Inc.", country_code: "AU", country: "Australia" };
    const signals = { hosting: true, tor: false, vpn: null, relay: false, proxy: null, service: "Cloudflare" };
    expect(Value.Check(LookupResultSchema, { ...result, privacy: signals })).toBe(true);
    expect(Value.Check(LookupResultSchema, result)).toBe(false);
    expect(Value.Check(LookupResultSchema, { ...result, privacy: { ...signals, tor: "no" } })).toBe(false);
    expect(Value.Check(LookupResultSchema, { ...result, privacy: { ...signals, anonymous: true } })).toBe(false);
  });

  test("what the app answers matches the document's schemas", async () => {
    const app = await makeTestApp();
    try {
      const { secret } = await app.issueKey("free");
      const lookup = await app.request("POST", "/v1/lookup", { key: secret, body: { ip: "1.1.1.1" } });
      const answered = await lookup.json();
      expect(Value.Check(LookupResultSchema, answered)).toBe(true);
      expect((answered as { privacy: { hosting: boolean } }).privacy.hosting).toBe(true);
      const batch = await app.request("POST", "/v1/lookup/batch", { key: secret, body: { ips: ["8.8.8.8", "2606:4700:4700::1111"] } });
      expect(Value.Check(BatchResultSchema, await batch.json())).toBe(true);
      const usage = await app.request("GET", "/v1/usage", { key: secret });
      expect(Value.Check(UsageSchema, await usage.json())).toBe(true);
      // A numeric string is no longer an integer.
      expect(Value.Check(UsageSchema, { key: { id: "k", name: "n" }, plan: { name: "p", max_batch_size: "100", monthly_units: null, rate_limit: null }, period: { start: "", end: "" }, units: { used: 0, limit: null, remaining: null } })).toBe(false);
    } finally {
      await app.close();
    }
  });
});

describe("the admin document", () => {
  const problemCodes = (operation: Operation, status: string) =>
    ((operation.responses[status]?.content?.["application/problem+json"]?.schema as { allOf: { properties?: { code?: { enum: string[] } } }[] } | undefined)?.allOf[1]?.properties?.code?.enum ?? []);

  test("every change documents 403 read_only_token, and every read that refuses query members documents 400 invalid_request", () => {
    for (const { path, method, operation } of operations(documents.admin as never)) {
      if (method === "get") {
        // The document itself takes no token and no query; /admin/v1/asn/{asn} answers as
        // the public /v1/asn/{asn} does, query members and all.
        const refusesQuery = path.startsWith("/admin/v1/") && path !== "/admin/v1/asn/{asn}";
        expect({ path, method, invalidRequest: problemCodes(operation, "400").includes("invalid_request") }).toEqual({ path, method, invalidRequest: refusesQuery });
      } else {
        expect({ path, method, readOnly: problemCodes(operation, "403") }).toEqual({ path, method, readOnly: ["read_only_token"] });
      }
    }
  });

  test("what the admin app answers matches the document's schemas", async () => {
    const testApp = await makeTestApp();
    try {
      const index = defaultIndex();
      const app = createAdminApp({ store: testApp.store, now: () => new Date(), version: "t", workers: 1, uptimeSeconds: () => 3, dataInfo: () => index.info });
      const { secret } = await testApp.store.createAdminToken("ops");
      const { key } = await testApp.store.createKey("k", "free", { expiresAt: "2099-01-01T00:00:00.000Z", allowedCidrs: ["10.0.0.0/8"], allowedOrigins: ["https://a.example"], metadata: { a: [1] } });
      const get = async (path: string) => (await app.handle(new Request(`http://admin${path}`, { headers: { authorization: `Bearer ${secret}` } }))).json();
      const rotated = await app.handle(
        new Request(`http://admin/admin/v1/keys/${key.id}/rotate`, { method: "POST", headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" }, body: '{"grace":"1h"}' }),
      );
      expect(Value.Check(IssuedKey, await rotated.json())).toBe(true);
      expect(Value.Check(AdminKeyList, await get("/admin/v1/keys"))).toBe(true);
      const audit = (await get("/admin/v1/audit")) as { entries: unknown[] };
      expect(audit.entries).toHaveLength(1);
      expect(Value.Check(AuditList, audit)).toBe(true);
      expect(Value.Check(AdminTokenInfo, await get("/admin/v1/token"))).toBe(true);
      expect(Value.Check(AdminPlanList, await get("/admin/v1/plans"))).toBe(true);
      expect(Value.Check(AdminUsage, await get("/admin/v1/usage"))).toBe(true);
      expect(Value.Check(AdminStatus, await get("/admin/v1/status"))).toBe(true);
      const served = await (await app.handle(new Request("http://admin/admin/openapi.json"))).json();
      expect(served).toEqual(JSON.parse(JSON.stringify(adminOpenApiDocument("t"))));
    } finally {
      await testApp.close();
    }
  });
});

test("openapi-typescript generates a typed client from both documents, and a call type-checks (and a wrong one does not)", async () => {
  for (const [name, doc] of Object.entries(documents)) {
    writeFileSync(join(dir, `${name}.ts`), astToString(await openapiTS(JSON.parse(JSON.stringify(doc)))));
  }
  writeFileSync(
    join(dir, "client.ts"),
    `import type { paths as Public } from "./public.ts";
import type { paths as Admin } from "./admin.ts";

/** A typed call of one operation: its JSON body in, its 200 (or 201) JSON answer out. */
type Json<Op> = Op extends { requestBody: { content: { "application/json": infer B } } } ? B : never;
type Ok<Op, S extends number = 200> = Op extends { responses: { [K in S]: { content: { "application/json": infer R } } } } ? R : never;

async function call<Op, S extends number = 200>(base: string, token: string, method: string, path: string, body?: Json<Op>): Promise<Ok<Op, S>> {
  const response = await fetch(base + path, { method, headers: { authorization: "Bearer " + token, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  return (await response.json()) as Ok<Op, S>;
}

export async function demo(base: string, key: string, admin: string, token: string): Promise<void> {
  const result = await call<Public["/v1/lookup"]["post"]>(base, key, "POST", "/v1/lookup", { ip: "1.1.1.1" });
  const asn: number | null = result.asn;
  const version: 4 | 6 = result.version;
  // @ts-expect-error asn is an integer or null, never a string
  const text: string | null = result.asn;
  const batch = await call<Public["/v1/lookup/batch"]["post"]>(base, key, "POST", "/v1/lookup/batch", { ips: ["1.1.1.1"] });
  const first: string | null | undefined = batch.results[0]?.network;
  // @ts-expect-error ips is an array
  await call<Public["/v1/lookup/batch"]["post"]>(base, key, "POST", "/v1/lookup/batch", { ips: "1.1.1.1" });
  const usage = await call<Public["/v1/usage"]["get"]>(base, key, "GET", "/v1/usage");
  const limit: number | null = usage.plan.monthly_units;
  const used: number = usage.units.used;
  type Remaining = Public["/v1/lookup"]["post"]["responses"][200]["headers"]["X-Units-Remaining"];
  const remaining: Remaining = 5;

  const created = await call<Admin["/admin/v1/keys"]["post"], 201>(admin, token, "POST", "/admin/v1/keys", { name: "acme", plan: "free" });
  const secret: string = created.key;
  // @ts-expect-error the body has no such field
  await call<Admin["/admin/v1/keys"]["post"], 201>(admin, token, "POST", "/admin/v1/keys", { name: "acme", colour: "red" });
  const keys = await call<Admin["/admin/v1/keys"]["get"]>(admin, token, "GET", "/admin/v1/keys");
  const units: number = keys.keys[0]!.units_this_period;
  const lastUsed: string | null = keys.keys[0]!.last_used_at;
  const plan = await call<Admin["/admin/v1/plans/{name}"]["put"]>(admin, token, "PUT", "/admin/v1/plans/gold", { max_batch_size: 5, monthly_units: null, rate_limit: 10 });
  const rate: number | null = plan.rate_limit;
  const days = await call<Admin["/admin/v1/usage"]["get"]>(admin, token, "GET", "/admin/v1/usage");
  const today: number = days.days[0]!.units;
  const status = await call<Admin["/admin/v1/status"]["get"]>(admin, token, "GET", "/admin/v1/status");
  const workers: number = status.workers;
  console.log(asn, version, text, first, limit, used, remaining, secret, units, lastUsed, rate, today, workers);
}
`,
  );
  writeFileSync(
    join(dir, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: { target: "ES2022", module: "Preserve", moduleResolution: "bundler", lib: ["ES2022", "DOM"], types: [], strict: true, noUncheckedIndexedAccess: true, noEmit: true, allowImportingTsExtensions: true, skipLibCheck: true },
      include: ["*.ts"],
    }),
  );
  // The project's type checker (TypeScript 7); openapi-typescript itself builds on TypeScript 5's API.
  const tsc = join(import.meta.dir, "..", "..", "node_modules", "typescript-7", "bin", "tsc");
  const result = Bun.spawnSync([process.execPath, tsc, "-p", dir], { stdout: "pipe", stderr: "pipe" });
  expect(result.stdout.toString() + result.stderr.toString()).toBe("");
  expect(result.exitCode).toBe(0);

  // And the check bites: a call with the wrong type fails.
  writeFileSync(join(dir, "wrong.ts"), `import type { paths } from "./public.ts";\nconst asn: string = ({} as paths["/v1/lookup"]["post"]["responses"][200]["content"]["application/json"]).asn ?? "";\nexport { asn };\n`);
  const wrong = Bun.spawnSync([process.execPath, tsc, "-p", dir], { stdout: "pipe", stderr: "pipe" });
  expect(wrong.exitCode).not.toBe(0);
  expect(wrong.stdout.toString()).toContain("wrong.ts");
}, 60_000);

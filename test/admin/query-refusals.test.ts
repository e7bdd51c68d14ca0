import { afterAll, expect, test } from "bun:test";
import { createAdminApp } from "../../src/admin/admin-app.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { defaultIndex } from "../support/default-data.ts";

/**
 * Every /admin/v1 GET route refuses a query member it does not take, and one given
 * twice, with 400 invalid_request naming it, as /admin/v1/audit and /admin/v1/usage
 * do: a misspelt or misplaced filter is told rather than silently ignored. (The AS
 * lookups answer as the public API's do, word for word: asn-admin.test.ts.)
 */
const store = SqliteStore.open(":memory:");
afterAll(() => store.close());
const index = defaultIndex();
const app = createAdminApp({ store, now: () => new Date(), version: "t", workers: 1, uptimeSeconds: () => 3, dataInfo: () => index.info, index: () => index });
const { secret } = await store.createAdminToken("ops");
const reader = await store.createReadOnlyAdminToken("auditor");
const { webhook } = await store.webhooks.createWebhook("http://127.0.0.1:9/hook", ["key.created"]);

async function get(path: string, bearer = secret): Promise<{ status: number; json: { code?: string; detail?: string } }> {
  const response = await app.handle(new Request(`http://admin${path}`, { headers: { authorization: `Bearer ${bearer}` } }));
  return { status: response.status, json: (await response.json()) as { code?: string; detail?: string } };
}

const ROUTES = [
  "/admin/v1/keys",
  "/admin/v1/plans",
  "/admin/v1/token",
  "/admin/v1/status",
  "/admin/v1/corrections",
  "/admin/v1/webhooks",
  `/admin/v1/webhooks/${webhook.id}/deliveries`,
  "/admin/v1/audit",
  "/admin/v1/usage",
];

test("a GET route answers 200 without a query, and 400 naming the member for an unknown one, to any token", async () => {
  for (const route of ROUTES) {
    expect({ route, status: (await get(route)).status }).toEqual({ route, status: 200 });
    for (const bearer of [secret, reader.secret]) {
      const refused = await get(`${route}?x=1`, bearer);
      expect({ route, status: refused.status, code: refused.json.code, detail: refused.json.detail }).toEqual({ route, status: 400, code: "invalid_request", detail: expect.stringContaining("'x'") });
    }
  }
});

test("a query member given twice is refused on every GET route, the ones taking a query included", async () => {
  for (const path of [`/admin/v1/webhooks/${webhook.id}/deliveries?x=1&x=1`, "/admin/v1/keys?x=1&x=2", "/admin/v1/audit?from=2026-11-01&from=2026-11-02", "/admin/v1/usage?key=a&key=b"]) {
    const refused = await get(path);
    expect({ path, status: refused.status, code: refused.json.code }).toEqual({ path, status: 400, code: "invalid_request" });
  }
});

import { afterAll, expect, test } from "bun:test";
import { createAdminApp } from "../../src/admin/admin-app.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { defaultIndex } from "../support/default-data.ts";

/**
 * What `POST /admin/v1/webhooks` refuses, through the admin app itself: 400
 * invalid_request, nothing created, and no password of the URL in the answer.
 */
const store = SqliteStore.open(":memory:");
afterAll(() => store.close());
const index = defaultIndex();
const app = createAdminApp({ store, now: () => new Date(), version: "t", workers: 1, uptimeSeconds: () => 3, dataInfo: () => index.info });
const { secret } = await store.createAdminToken("ops");

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; text: string; json: any }> {
  const response = await app.handle(
    new Request(`http://admin${path}`, { method, headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) }),
  );
  const text = await response.text();
  return { status: response.status, text, json: text === "" ? null : JSON.parse(text) };
}

const listed = async () => (await call("GET", "/admin/v1/webhooks")).json.webhooks as { id: string; url: string }[];

test("a URL that is no URL is refused without its user info, however it is broken", async () => {
  for (const url of ["https://user:hunter2@[::1", "http:user:hunter2@[::1", "//user:hunter2@[::1", "ftp://user:hunter2@["]) {
    const refused = await call("POST", "/admin/v1/webhooks", { url, events: ["key.created"] });
    expect({ url, status: refused.status, code: refused.json.code }).toEqual({ url, status: 400, code: "invalid_request" });
    expect({ url, answer: refused.text }).not.toEqual({ url, answer: expect.stringMatching(/hunter2|user/) });
  }
  expect((await call("POST", "/admin/v1/webhooks", { url: "https://user:hunter2@[::1", events: ["key.created"] })).json.detail).toBe('"https://***@[::1" is not a URL');
  expect(await listed()).toEqual([]);
});

test("a URL whose text names no host (http:///x, http:x: URL() reads both as http://x/) is refused", async () => {
  for (const url of ["http:///x", "http:x", "https:/x"]) {
    const refused = await call("POST", "/admin/v1/webhooks", { url, events: ["key.created"] });
    expect({ url, status: refused.status, code: refused.json.code, detail: refused.json.detail }).toEqual({ url, status: 400, code: "invalid_request", detail: expect.stringContaining("names no host") });
  }
  expect(await listed()).toEqual([]);
});

test("a URL another webhook has already is refused, naming it; once that one is removed, it may be added again", async () => {
  const first = await call("POST", "/admin/v1/webhooks", { url: "http://127.0.0.1:9/hook", events: ["key.created"] });
  expect(first.status).toBe(201);
  // The same receiver, spelt otherwise, with the same events or others.
  for (const [url, events] of [["http://127.0.0.1:9/hook", ["key.created"]], ["HTTP://127.0.0.1:9/hook", ["key.revoked"]]] as const) {
    const again = await call("POST", "/admin/v1/webhooks", { url, events });
    expect({ url, status: again.status, code: again.json.code }).toEqual({ url, status: 400, code: "invalid_request" });
    expect(again.json.detail).toContain(`the webhook ${first.json.id} has this URL already`);
    expect(again.text).not.toContain("whsec_");
  }
  expect((await listed()).map((webhook) => webhook.id)).toEqual([first.json.id]);
  // Another path is another receiver.
  expect((await call("POST", "/admin/v1/webhooks", { url: "http://127.0.0.1:9/other", events: ["key.created"] })).status).toBe(201);
  expect((await call("DELETE", `/admin/v1/webhooks/${first.json.id}`)).status).toBe(204);
  const replaced = await call("POST", "/admin/v1/webhooks", { url: "http://127.0.0.1:9/hook", events: ["key.revoked"] });
  expect(replaced.status).toBe(201);
  expect((await listed()).filter((webhook) => webhook.url === "http://127.0.0.1:9/hook").map((webhook) => webhook.id)).toEqual([replaced.json.id]);
});

test("an empty # or ? is refused (a fragment, an empty query), and a spelling that percent-encodes a plain letter is the URL it spells: no second webhook for one receiver", async () => {
  const first = await call("POST", "/admin/v1/webhooks", { url: "https://hooks.example.com/sp", events: ["key.created"] });
  expect(first.status).toBe(201);
  for (const [url, detail] of [
    ["https://hooks.example.com/sp?", 'the URL\'s query is empty: write it without the "?"'],
    ["https://hooks.example.com/sp?#", "a webhook URL has no #fragment"],
    ["https://hooks.example.com/sp#", "a webhook URL has no #fragment"],
    ["https://hooks.example.com/%73p", `the webhook ${first.json.id} has this URL already`],
    ["https://hooks.example.com/%73%70", `the webhook ${first.json.id} has this URL already`],
  ] as const) {
    const refused = await call("POST", "/admin/v1/webhooks", { url, events: ["key.revoked"] });
    expect({ url, status: refused.status, code: refused.json.code, detail: refused.json.detail }).toEqual({ url, status: 400, code: "invalid_request", detail: expect.stringContaining(detail) });
  }
  // An encoded character that is not a plain one (`/`) stays apart from the character.
  expect((await call("POST", "/admin/v1/webhooks", { url: "https://hooks.example.com/a%2fb", events: ["key.created"] })).status).toBe(201);
  expect((await call("POST", "/admin/v1/webhooks", { url: "https://hooks.example.com/a/b", events: ["key.created"] })).status).toBe(201);
  const again = await call("POST", "/admin/v1/webhooks", { url: "https://hooks.example.com/a%2Fb", events: ["key.created"] });
  expect({ status: again.status, detail: again.json.detail }).toEqual({ status: 400, detail: expect.stringContaining("has this URL already") });
  expect((await listed()).map((webhook) => webhook.url).filter((url) => url.startsWith("https://hooks.example.com/"))).toEqual([
    "https://hooks.example.com/sp",
    "https://hooks.example.com/a%2fb",
    "https://hooks.example.com/a/b",
  ]);
});

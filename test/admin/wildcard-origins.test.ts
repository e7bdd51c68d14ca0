import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { runCliInProcess } from "../support/in-process-cli.ts";
import { adminAppOf, makeTestApp, type TestApp } from "../support/test-app.ts";

/**
 * An allowed origin with a wildcard (`https://*.example.com`) could never equal the
 * Origin a browser sends, so a key holding one would refuse every browser: the admin API
 * (and the console, which writes through it) answers 400 invalid_request, the CLI exits
 * 2, both saying that wildcards are not supported, and nothing is stored.
 */
let t: TestApp;
let token: string;
beforeAll(async () => {
  t = await makeTestApp();
  token = (await t.store.createAdminToken("ops")).secret;
});
afterAll(() => t.close());

const admin = () => adminAppOf(t);
const send = (method: string, path: string, body: unknown) =>
  admin().handle(new Request(`http://admin${path}`, { method, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(body) }));
const WILDCARDS = ["https://*.example.com", "*", "https://app.example.*", "http://*:8080", "https://example.com:*"];

describe("allowed_origins with a wildcard", () => {
  test("the admin API refuses it on POST and PATCH with 400 invalid_request, storing nothing", async () => {
    const keysBefore = (await t.store.listKeys()).length;
    for (const origin of WILDCARDS) {
      const response = await send("POST", "/admin/v1/keys", { name: "web", allowed_origins: ["https://ok.example.com", origin] });
      expect(response.status).toBe(400);
      expect(response.headers.get("content-type")).toBe("application/problem+json");
      const problem = (await response.json()) as { code: string; detail: string };
      expect(problem.code).toBe("invalid_request");
      expect(problem.detail).toBe(`allowed_origins: "${origin}": wildcards are not supported; list each origin, such as https://app.example.com`);
    }
    expect((await t.store.listKeys()).length).toBe(keysBefore);

    const { key } = await t.store.createKey("patched", "free", { expiresAt: null, allowedCidrs: null, allowedOrigins: ["https://app.example.com"], metadata: null });
    const patched = await send("PATCH", `/admin/v1/keys/${key.id}`, { allowed_origins: ["https://*.example.com"] });
    expect(patched.status).toBe(400);
    expect(await patched.json()).toMatchObject({ code: "invalid_request", detail: expect.stringContaining("wildcards are not supported") });
    expect((await t.store.listKeys()).find((k) => k.id === key.id)?.controls?.allowedOrigins).toEqual(["https://app.example.com"]);
  });

  test("the CLI exits 2 with the same message on keys create and keys update, storing nothing", async () => {
    const state = ["--state", join(t.dir, "state.db")];
    const keysBefore = (await t.store.listKeys()).length;
    const created = await runCliInProcess("", ["keys", "create", "--name", "web", "--allowed-origins", "https://app.example.com,https://*.example.com", ...state]);
    expect(created.code).toBe(2);
    expect(created.stdout).toBe("");
    expect(created.stderr).toBe('iplookup: --allowed-origins: "https://*.example.com": wildcards are not supported; list each origin, such as https://app.example.com\n');
    expect((await t.store.listKeys()).length).toBe(keysBefore);

    const { key } = await t.store.createKey("cli", "free");
    const updated = await runCliInProcess("", ["keys", "update", key.id, "--allowed-origins", "*", ...state]);
    expect(updated.code).toBe(2);
    expect(updated.stderr).toContain('--allowed-origins: "*": wildcards are not supported');
    expect((await t.store.listKeys()).find((k) => k.id === key.id)?.controls?.allowedOrigins ?? null).toBeNull();
  });
});

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Browser, type Page } from "playwright-core";
import { join } from "node:path";
import { openContext, SCREENSHOTS } from "../support/chromium.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { openSignedIn, startConsoleServer, type ConsoleServer } from "../support/console-server.ts";
import { type ServerProcess } from "../support/server-process.ts";

/**
 * The console's key controls, rotation with a grace, audit log and read-only tokens
 * (CONTRACT §16) in a real browser (Debian's Chromium through playwright-core) against a
 * real two-thread server, at a desktop width and a phone's (390 px). Screenshots go to
 * test/screenshots/ (not kept in git) for review.
 */

const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 1000 };
let server: ServerProcess;
let admin: string;
let token: string;
let reader: string;
let browser: Browser;
let state: string;
let setup: ConsoleServer | undefined;

beforeAll(async () => {
  setup = await startConsoleServer("console-controls", ["--workers", "2"], (run) => {
    reader = (JSON.parse(run(["admin", "create", "--name", "auditor", "--read-only", "--json"]).stdout) as { token: string }).token;
  });
  ({ state, server, admin, token, browser } = setup);
}, 120_000);

afterAll(() => setup?.close());

function signedIn(with_: string, viewport = DESKTOP): Promise<{ page: Page; errors: string[]; close: () => Promise<void> }> {
  return openSignedIn(browser, admin, with_, viewport);
}

const lookup = (key: string) =>
  fetch(`${server.url}/v1/lookup`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: '{"ip":"1.1.1.1"}' });
const codeOf = async (response: Response) => (response.status === 200 ? 200 : ((await response.json()) as { code: string }).code);
async function withinASecond(done: () => Promise<boolean>): Promise<void> {
  const started = performance.now();
  while (!(await done())) {
    expect(performance.now() - started).toBeLessThan(1000);
    await Bun.sleep(25);
  }
}

/**
 * How far an element's content reaches past its own box, in CSS pixels (0: it fits).
 * (The page as a whole is as wide as its widest table, the keys' and the plans': the
 * width of the page at a phone's size is the layout's, not these sections'.)
 */
async function overflow(page: Page, selector: string): Promise<number> {
  return page.evaluate(`(() => { const box = document.querySelector(${JSON.stringify(selector)}); return Math.max(0, box.scrollWidth - box.clientWidth); })()`) as Promise<number>;
}

describe("the console's key controls and audit log", () => {
  test("creates a key with controls, edits them (a refusal shown in the editor), rotates with a grace; the audit log shows it all", async () => {
    const { page, errors, close } = await signedIn(token);
    await page.fill("#new-key-name", "web-app");
    await page.click("#new-key-options");
    await page.locator("#key-editor").waitFor({ state: "visible" });
    expect(await page.locator("#key-editor-name").inputValue()).toBe("web-app");
    await page.fill("#key-editor-expires", "2099-01-01T00:00");
    await page.fill("#key-editor-cidrs", "203.0.113.0/24");
    await page.fill("#key-editor-origins", "https://app.example.com");
    await page.fill("#key-editor-metadata", '{"team": "maps"}');
    await page.screenshot({ path: join(SCREENSHOTS, "console-key-editor.png"), fullPage: true });
    await page.click("#key-editor-save");
    await page.locator("#secret-panel").waitFor({ state: "visible" });
    const secret = (await page.locator("#secret-value").textContent())!;
    expect(await page.locator("#key-editor").isHidden()).toBe(true);
    const row = page.locator("#keys tbody tr", { hasText: "web-app" });
    await row.locator(".key-controls").waitFor();
    expect(await row.locator(".key-controls").textContent()).toBe("expires 2099-01-01 · 1 address block · 1 origin · metadata");
    // From 127.0.0.1, outside the allowlist.
    expect(await codeOf(await lookup(secret))).toBe("address_not_allowed");

    // A bad value: said in the editor, nothing changed.
    await row.locator("button", { hasText: "Edit" }).click();
    await page.locator("#key-editor").waitFor({ state: "visible" });
    expect(await page.locator("#key-editor-cidrs").inputValue()).toBe("203.0.113.0/24");
    expect(await page.locator("#key-editor-expires").inputValue()).toBe("2099-01-01T00:00");
    await page.fill("#key-editor-cidrs", "not-a-block");
    await page.click("#key-editor-save");
    await page.locator("#key-editor-error").waitFor({ state: "visible" });
    expect(await page.locator("#key-editor-error").textContent()).toContain("not an IP address or CIDR block (invalid_request)");
    await page.screenshot({ path: join(SCREENSHOTS, "console-key-editor-refused.png") });
    await page.fill("#key-editor-cidrs", "127.0.0.0/8\n::1");
    await page.click("#key-editor-save");
    await page.locator("#keys tr[data-key-id] + tr.note-row", { hasText: "Key web-app saved" }).waitFor();
    await withinASecond(async () => (await lookup(secret)).status === 200);
    await row.locator(".key-controls", { hasText: "2 address blocks" }).waitFor();

    // Rotation with a grace: both secrets work.
    page.once("dialog", (dialog) => void dialog.accept("24h"));
    await row.locator("button", { hasText: "Rotate" }).click();
    await page.locator("#secret-title", { hasText: "Rotated key" }).waitFor();
    const rotated = (await page.locator("#secret-value").textContent())!;
    expect(rotated).not.toBe(secret);
    await row.locator(".key-controls", { hasText: "old secret until" }).waitFor();
    await Bun.sleep(1100);
    expect([(await lookup(secret)).status, (await lookup(rotated)).status]).toEqual([200, 200]);
    await page.click("#dismiss-secret");

    // The audit log, newest first, with this console's token as the actor.
    const actions = page.locator("#audit-entries tbody tr");
    await page.locator("#audit-entries tbody tr[data-action='key.rotated']").waitFor();
    const listed = await actions.evaluateAll((rows) => rows.map((row) => row.getAttribute("data-action")));
    expect(listed.slice(0, 3)).toEqual(["key.rotated", "key.updated", "key.created"]);
    const updated = await page.locator("#audit-entries tbody tr[data-action='key.updated']").textContent();
    expect(updated).toMatch(/adm_[a-z2-7]{16}/);
    expect(updated).toContain("allowed_cidrs: 203.0.113.0/24 → 127.0.0.0/8, ::1/128");
    const audit = (await page.locator("#audit").textContent())!;
    expect(audit).not.toContain(secret);
    expect(audit).not.toContain(rotated);
    await page.locator("#audit").screenshot({ path: join(SCREENSHOTS, "console-audit.png") });
    await page.screenshot({ path: join(SCREENSHOTS, "console-controls.png"), fullPage: true });
    // The refused edit's 400 is the only complaint the browser makes.
    expect(errors.filter((error) => !error.includes("400"))).toEqual([]);
    await close();
  });

  test("an edit sends only what changed: an expired key's metadata can change, its expiry (to the millisecond) stays", async () => {
    const store = SqliteStore.open(state);
    const { key } = await store.createKey("lapsed", "free", { expiresAt: "2099-01-01T00:00:00.000Z", allowedCidrs: null, allowedOrigins: null, metadata: null });
    // Expired a moment ago, at a time the editor shows only to the minute.
    const expired = new Date(Math.floor(Date.now() / 1000) * 1000 - 60_000 + 123).toISOString();
    await store.updateKey(key.id, { expiresAt: expired });
    await store.close();
    const { page, errors, close } = await signedIn(token);
    const row = page.locator(`#keys tbody tr[data-key-id='${key.id}']`);
    await row.locator(".key-controls", { hasText: "expired" }).waitFor();
    await row.locator("button", { hasText: "Edit" }).click();
    await page.fill("#key-editor-metadata", '{"note": "lapsed on purpose"}');
    await page.click("#key-editor-save");
    await page.locator("#keys tr[data-key-id] + tr.note-row", { hasText: "Key lapsed saved" }).waitFor();
    const listed = (await (await fetch(`${admin}/admin/v1/keys`, { headers: { authorization: `Bearer ${token}` } })).json()) as { keys: { id: string; expires_at: string; metadata: unknown }[] };
    expect(listed.keys.find((entry) => entry.id === key.id)).toMatchObject({ expires_at: expired, metadata: { note: "lapsed on purpose" } });
    expect(errors).toEqual([]);
    await close();
  });

  test("at a phone's width (390 px) the editor and the audit log fit the screen", async () => {
    const { page, errors, close } = await signedIn(token, PHONE);
    await page.locator("#audit-entries tbody tr").first().waitFor();
    expect(await overflow(page, "#audit")).toBe(0);
    expect(await overflow(page, "#audit-form")).toBe(0);
    await page.locator("#audit").screenshot({ path: join(SCREENSHOTS, "console-audit-phone.png") });
    await page.locator("#keys tbody tr", { hasText: "web-app" }).locator("button", { hasText: "Edit" }).click();
    await page.locator("#key-editor").waitFor({ state: "visible" });
    expect(await overflow(page, "#key-editor")).toBe(0);
    expect(await overflow(page, "#key-editor-origins")).toBe(0);
    await page.locator("#key-editor").screenshot({ path: join(SCREENSHOTS, "console-key-editor-phone.png") });
    await page.click("#key-editor-cancel");
    expect(await page.locator("#key-editor").isHidden()).toBe(true);
    expect(errors).toEqual([]);
    await close();
  });

  test("a page on an allowed origin calls the API from the browser (preflight, then the answer and its units readable); another origin's page cannot", async () => {
    // A page of its own on another loopback port: another origin.
    const site = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("<!doctype html><title>app</title>", { headers: { "content-type": "text/html" } }) });
    const origin = `http://127.0.0.1:${site.port}`;
    try {
      const made = (origins: string[]) =>
        fetch(`${admin}/admin/v1/keys`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: JSON.stringify({ name: `browser-${origins.length}`, allowed_origins: origins }),
        }).then(async (response) => ((await response.json()) as { id: string; key: string }));
      const allowed = await made([origin]);
      const other = await made(["https://elsewhere.example", "https://second.example"]);
      const context = await openContext(browser);
      const page = await context.newPage();
      await page.goto(`${origin}/`);
      const call = (key: string) =>
        page.evaluate(`fetch(${JSON.stringify(`${server.url}/v1/lookup`)}, { method: "POST", headers: { authorization: "Bearer ${key}", "content-type": "application/json" }, body: '{"ip":"1.1.1.1"}' })
          .then(async (r) => ({ status: r.status, units: r.headers.get("x-units-consumed"), asn: (await r.json()).asn }), (e) => ({ failed: String(e) }))`);
      expect(await call(allowed.key)).toEqual({ status: 200, units: "1", asn: 13335 });
      expect(await call(other.key)).toEqual({ failed: expect.stringContaining("Failed to fetch") });
      // The other key was refused by the server, not only by the browser, and charged nothing.
      const usage = (await (await fetch(`${server.url}/v1/usage`, { headers: { authorization: `Bearer ${other.key}` } })).json()) as { units: { used: number } };
      expect(usage.units.used).toBe(0);
      await context.close();
    } finally {
      site.stop(true);
    }
  });

  for (const [width, viewport] of [["desktop", DESKTOP], ["phone", PHONE]] as const) {
    test(`a read-only token (${width}): the page says so, hides and disables every change, and still shows the audit log`, async () => {
      const { page, errors, close } = await signedIn(reader, viewport);
      await page.locator("#read-only-note").waitFor({ state: "visible" });
      expect(await page.locator("#read-only-note").textContent()).toContain("read-only token (auditor)");
      await page.locator("#keys tbody tr", { hasText: "web-app" }).waitFor();
      expect(await page.locator("#create-key-form").isHidden()).toBe(true);
      for (const label of ["Edit", "Rotate", "Revoke"]) expect(await page.locator("#keys button", { hasText: label }).first().isVisible()).toBe(false);
      expect(await page.locator("#keys .key-plan").first().isDisabled()).toBe(true);
      expect(await page.locator("#plans tbody tr[data-plan='free'] input").first().isDisabled()).toBe(true);
      expect(await page.locator("#plans tbody tr[data-plan='']").isHidden()).toBe(true);
      await page.locator("#audit-entries tbody tr[data-action='key.rotated']").waitFor();
      expect(await overflow(page, "#read-only-note")).toBe(0);
      await page.screenshot({ path: join(SCREENSHOTS, `console-read-only-${width}.png`), fullPage: width === "desktop" });
      // Signing out and in again with a token that may write gives every control back.
      await page.click("#sign-out");
      await page.fill("#token-input", token);
      await page.click("#sign-in-form button[type=submit]");
      await page.locator("#signed-in").waitFor({ state: "visible" });
      await page.locator("#read-only-note").waitFor({ state: "detached" });
      expect(await page.locator("#create-key-form").isVisible()).toBe(true);
      expect(await page.locator("#new-key-name").isDisabled()).toBe(false);
      expect(await page.locator("#create-key-form button[type=submit]").isDisabled()).toBe(false);
      expect(errors).toEqual([]);
      await close();
    });
  }
});

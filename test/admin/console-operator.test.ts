import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Browser, type Locator, type Page } from "playwright-core";
import { join } from "node:path";
import { openContext, SCREENSHOTS } from "../support/chromium.ts";
import { AuditLog } from "../../src/audit/audit-log.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { openSignedIn, startConsoleServer, type ConsoleServer } from "../support/console-server.ts";

/**
 * What an operator meets using the console day to day, in a real browser against a real
 * server: secrets that must not outlive a session, a secret and a message beside the
 * action however long the list of keys, a read-only token's page, edits not lost to a
 * redraw, a refusal that leaves the row as it was, long and right-to-left names, phone
 * widths, the audit log's span and limit, a server that goes away, and the keyboard.
 */

const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
let setup: ConsoleServer | undefined;
let browser: Browser;
let admin: string;
let token: string;
let reader: string;
let state: string;
/** Keys made before the page opens, so that a new key's row is far below the form. */
const MANY_KEYS = 40;
const LONG_NAME = "x".repeat(200);
const RTL_NAME = "acme\u202Eexe.txt";

beforeAll(async () => {
  setup = await startConsoleServer("console-operator", [], (run) => {
    reader = (JSON.parse(run(["admin", "create", "--name", "auditor", "--read-only", "--json"]).stdout) as { token: string }).token;
  });
  ({ browser, admin, token, state } = setup);
  const store = SqliteStore.open(state);
  for (let i = 0; i < MANY_KEYS; i++) await store.createKey(`customer-${String(i).padStart(2, "0")}`, "free");
  await store.createKey(LONG_NAME, "free");
  await store.createKey(RTL_NAME, "free");
  await store.close();
  const added = await fetch(`${admin}/admin/v1/webhooks`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ url: "http://127.0.0.1:9/a-long-path/that/goes/on/and/on/and/on/for/a/while/hook", events: ["key.revoked"] }),
  });
  expect(added.status).toBe(201);
}, 120_000);

afterAll(() => setup?.close());

/** Signed in, the keys drawn. */
async function signedIn(with_: string, viewport = DESKTOP): Promise<{ page: Page; errors: string[]; close: () => Promise<void> }> {
  const opened = await openSignedIn(browser, admin, with_, viewport);
  await opened.page.locator("#keys tbody tr[data-key-id]").first().waitFor();
  return opened;
}

/** Whether an element is wholly inside the screen. */
async function inView(page: Page, selector: string): Promise<boolean> {
  const box = await page.locator(selector).first().boundingBox();
  return box !== null && box.y >= 0 && box.y + box.height <= page.viewportSize()!.height;
}

/** How much wider than the screen the page is, in CSS pixels (0: it fits). */
function pageOverflow(page: Page): Promise<number> {
  return page.evaluate("Math.max(0, document.documentElement.scrollWidth - innerWidth)") as Promise<number>;
}

const focusedId = (page: Page) => page.evaluate("document.activeElement?.id ?? ''") as Promise<string>;

describe("the console, as an operator uses it", () => {
  test("a new key's secret shows under its row with the message, in view, Copy focused; Done forgets it", async () => {
    const { page, errors, close } = await signedIn(token);
    await page.fill("#new-key-name", "far-below");
    await page.click("#create-key-form button[type=submit]");
    const row = page.locator("#keys tr[data-key-id]", { hasText: "far-below" });
    await row.waitFor();
    // Row, message, secret: together, however far down the list the new key is.
    await page.locator("#keys tr[data-key-id] + tr.note-row + tr.secret-holder #secret-panel").waitFor({ state: "visible" });
    expect(await page.locator("#keys tr.note-row").textContent()).toContain("Key far-below created on plan free; copy its secret below now.");
    expect(await inView(page, "#secret-panel")).toBe(true);
    expect(await inView(page, "#keys tr.note-row")).toBe(true);
    expect(await focusedId(page)).toBe("copy-secret");
    const secret = (await page.locator("#secret-value").textContent())!;
    expect(secret).toMatch(/^ipl_/);
    await page.screenshot({ path: join(SCREENSHOTS, "console-operator-secret-under-row.png") });
    await page.click("#dismiss-secret");
    expect(await page.content()).not.toContain(secret);
    // Focus goes back to the key's row.
    expect(await page.evaluate("document.activeElement?.closest('tr')?.textContent ?? ''")).toContain("far-below");

    // Created through the editor: the same, with a message.
    await page.fill("#new-key-name", "with-options");
    await page.click("#new-key-options");
    await page.fill("#key-editor-metadata", '{"team": "maps"}');
    await page.click("#key-editor-save");
    await page.locator("#keys tr.note-row", { hasText: "Key with-options created" }).waitFor();
    expect(await inView(page, "#secret-panel")).toBe(true);
    expect(await focusedId(page)).toBe("copy-secret");

    // Rotated, then revoked: the secret shown is taken away with the key.
    const rotated = page.locator("#keys tr[data-key-id]", { hasText: "with-options" });
    page.once("dialog", (dialog) => void dialog.accept(""));
    await rotated.locator("button", { hasText: "Rotate" }).click();
    await page.locator("#secret-title", { hasText: "Rotated key" }).waitFor();
    page.once("dialog", (dialog) => void dialog.accept());
    await rotated.locator("button", { hasText: "Revoke" }).click();
    await page.locator("#keys tr.note-row", { hasText: "is revoked" }).waitFor();
    expect(await page.locator("#secret-panel").count()).toBe(0);
    expect(errors).toEqual([]);
    await close();
  });

  test("a key made while the page cannot read the keys again still shows its secret, once", async () => {
    const { page, close } = await signedIn(token);
    await page.route("**/admin/v1/plans", (route) => route.abort("connectionrefused"));
    await page.fill("#new-key-name", "unlisted");
    await page.click("#create-key-form button[type=submit]");
    await page.locator("#secret-panel").waitFor({ state: "visible" });
    expect(await page.locator("#secret-value").textContent()).toMatch(/^ipl_/);
    expect(await page.locator("#secret-title").textContent()).toContain("unlisted");
    await close();
  });

  test("signing out forgets the secrets still shown: whoever signs in next on the tab sees none", async () => {
    const { page, errors, close } = await signedIn(token);
    await page.fill("#new-key-name", "left-open");
    await page.click("#create-key-form button[type=submit]");
    await page.locator("#secret-panel").waitFor({ state: "visible" });
    const keySecret = (await page.locator("#secret-value").textContent())!;
    await page.fill("#webhook-url", "http://127.0.0.1:9/hook");
    await page.locator("#webhook-events input[value='key.created']").check();
    await page.click("#add-webhook-form button[type=submit]");
    await page.locator("#webhook-secret-panel").waitFor({ state: "visible" });
    const webhookSecret = (await page.locator("#webhook-secret-value").textContent())!;
    // And an editor left open.
    await page.locator("#keys tr[data-key-id]", { hasText: "customer-00" }).locator("button", { hasText: "Edit" }).click();
    await page.locator("#key-editor").waitFor({ state: "visible" });

    await page.click("#sign-out");
    await page.locator("#sign-in").waitFor({ state: "visible" });
    const signedOut = await page.content();
    expect(signedOut).not.toContain(keySecret);
    expect(signedOut).not.toContain(webhookSecret);
    expect(await page.locator("#stale-data").isHidden()).toBe(true);

    await page.fill("#token-input", reader);
    await page.click("#sign-in-form button[type=submit]");
    await page.locator("#read-only-note").waitFor({ state: "visible" });
    await page.locator("#keys tbody tr[data-key-id]").first().waitFor();
    const next = await page.content();
    expect(next).not.toContain(keySecret);
    expect(next).not.toContain(webhookSecret);
    expect(await page.locator("#secret-panel").count()).toBe(0);
    expect(await page.locator("#webhook-secret-panel").isHidden()).toBe(true);
    expect(await page.locator("#key-editor").isHidden()).toBe(true);
    expect(errors).toEqual([]);
    await close();
  });

  test("another token given by #token= in a tab signed in already: nothing of the session before stays, and a read-only token may still press a secret's Done", async () => {
    const { page, errors, close } = await signedIn(token);
    await page.fill("#new-key-name", "switched-away");
    await page.click("#create-key-form button[type=submit]");
    await page.locator("#keys tr.note-row", { hasText: "switched-away created" }).waitFor();
    const keySecret = (await page.locator("#secret-value").textContent())!;
    expect(keySecret).toMatch(/^ipl_/);
    await page.fill("#webhook-url", "http://127.0.0.1:9/switched");
    await page.locator("#webhook-events input[value='key.created']").check();
    await page.click("#add-webhook-form button[type=submit]");
    await page.locator("#webhook-secret-panel").waitFor({ state: "visible" });
    const webhookSecret = (await page.locator("#webhook-secret-value").textContent())!;
    expect(webhookSecret).toMatch(/^whsec_/);

    // The same document, a new fragment: the read-only token signs in over the session.
    await page.goto(`${admin}/console#token=${reader}`);
    await page.locator("#read-only-note").waitFor({ state: "visible" });
    await page.locator("#keys tbody tr[data-key-id]").first().waitFor();
    await page.locator("#audit-entries tbody tr[data-action]").first().waitFor();
    const html = await page.content();
    expect(html).not.toContain(keySecret);
    expect(html).not.toContain(webhookSecret);
    expect(await page.locator("#secret-value").count()).toBe(0);
    expect(await page.locator("#webhook-secret-value").textContent()).toBe("");
    expect(await page.locator("#webhook-secret-panel").isHidden()).toBe(true);
    expect(await page.locator(".note", { hasText: "switched-away created" }).count()).toBe(0);
    // Done changes nothing on the server: a read-only token's page leaves it enabled.
    expect(await page.locator("#webhook-dismiss-secret").isDisabled()).toBe(false);
    expect(errors).toEqual([]);
    await close();
  });

  test("signing out empties the page it hides: no key, webhook, correction or audit entry is left in it", async () => {
    const { page, errors, close } = await signedIn(token);
    await page.locator("#audit-entries tbody tr[data-action]").first().waitFor();
    await page.locator("#webhooks tbody tr[data-webhook-id]").first().waitFor();
    const keyId = (await page.locator("#keys tbody tr[data-key-id]").first().getAttribute("data-key-id"))!;
    await page.click("#sign-out");
    await page.locator("#sign-in").waitFor({ state: "visible" });
    const html = await page.content();
    expect(html).not.toContain(keyId);
    expect(html).not.toContain("customer-00");
    expect(html).not.toContain("a-long-path/that/goes/on");
    for (const table of ["keys", "plans", "top-keys", "corrections", "webhooks", "deliveries", "audit-entries", "sources"]) {
      expect({ table, rows: await page.locator(`#${table} tbody tr`).count() }).toEqual({ table, rows: 0 });
    }
    expect(await page.locator("#usage-key option").count()).toBe(1);
    expect(errors).toEqual([]);
    await close();
  });

  test("Remove takes a webhook's signing secret off the page with it", async () => {
    const { page, errors, close } = await signedIn(token);
    await page.fill("#webhook-url", "http://127.0.0.1:9/removed-at-once");
    await page.locator("#webhook-events input[value='key.created']").check();
    await page.click("#add-webhook-form button[type=submit]");
    await page.locator("#webhook-secret-panel").waitFor({ state: "visible" });
    const secret = (await page.locator("#webhook-secret-value").textContent())!;
    const row = page.locator("#webhooks tr[data-webhook-id]", { hasText: "removed-at-once" });
    page.once("dialog", (dialog) => void dialog.accept());
    await row.locator("button", { hasText: "Remove" }).click();
    await page.locator("#webhooks-card .note", { hasText: "removed" }).waitFor();
    expect(await page.locator("#webhook-secret-panel").isHidden()).toBe(true);
    expect(await page.content()).not.toContain(secret);
    expect(errors).toEqual([]);
    await close();
  });

  test("allowed origins are one a line: an origin typed with spaces is refused whole, as typed", async () => {
    const { page, close } = await signedIn(token);
    await page.locator("#keys tr[data-key-id]", { hasText: "customer-02" }).locator("button", { hasText: "Edit" }).click();
    await page.fill("#key-editor-origins", "not a url");
    await page.click("#key-editor-save");
    await page.locator("#key-editor-error").waitFor({ state: "visible" });
    expect(await page.locator("#key-editor-error").textContent()).toContain('allowed_origins: "not a url" is not an origin');
    await close();
  });

  test("Done takes away the message that asked to copy the secret; a retry to come reads as to come", async () => {
    const { page, errors, close } = await signedIn(token);
    await page.fill("#new-key-name", "done-with-it");
    await page.click("#create-key-form button[type=submit]");
    await page.locator("#keys tr.note-row", { hasText: "copy its secret below now" }).waitFor();
    await page.click("#dismiss-secret");
    expect(await page.locator(".note", { hasText: "copy its secret below now" }).count()).toBe(0);

    // The webhook to port 9 refuses: its test event waits for a retry within a minute.
    const row = page.locator("#webhooks tr[data-webhook-id]", { hasText: "a-long-path" });
    await row.locator("button", { hasText: "Send test" }).click();
    await page.locator("#webhooks tr.note-row", { hasText: "Test event not delivered" }).waitFor();
    const pending = page.locator("#deliveries tr.delivery-pending").first();
    const state = (await pending.locator("td").nth(1).textContent())!;
    expect(state).toMatch(/^pendingnext in (\d+ s|1 minute)$/);
    expect(errors).toEqual([]);
    await close();
  });

  test("short phrases are not broken: a key's Last used at 1280 px, a signal's choice in the corrections' form at 390 px", async () => {
    const made = (await (
      await fetch(`${admin}/admin/v1/keys`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify({ name: "used-a-while-ago", plan: "free" }) })
    ).json()) as { id: string; key: string };
    const used = await fetch(`${setup!.server.url}/v1/lookup`, { method: "POST", headers: { authorization: `Bearer ${made.key}`, "content-type": "application/json" }, body: '{"ip":"1.1.1.1"}' });
    expect(used.status).toBe(200);
    // The key's last use is written with the next charges' commit: wait for the admin API to show it.
    let lastUsed: string | null | undefined;
    for (let tries = 0; tries < 100 && !lastUsed; tries++) {
      if (tries > 0) await Bun.sleep(50);
      const listed = (await (await fetch(`${admin}/admin/v1/keys`, { headers: { authorization: `Bearer ${token}` } })).json()) as { keys: { id: string; last_used_at: string | null }[] };
      lastUsed = listed.keys.find((key) => key.id === made.id)?.last_used_at;
    }
    expect({ key: "used-a-while-ago", last_used_at: lastUsed }).toEqual({ key: "used-a-while-ago", last_used_at: expect.any(String) });
    const context = await openContext(browser, { viewport: DESKTOP });
    const page = await context.newPage();
    // Five minutes later, as the page sees it.
    await page.clock.install({ time: Date.now() + 5 * 60_000 });
    await page.goto(`${admin}/console#token=${token}`);
    const last = page.locator(`#keys tr[data-key-id="${made.id}"] td`).nth(4);
    await last.waitFor();
    expect(await last.textContent()).toBe("5 minutes ago");
    const lines = (selector: string) =>
      page.evaluate(`(() => { const range = document.createRange(); range.selectNodeContents(document.querySelector(${JSON.stringify(selector)})); return new Set([...range.getClientRects()].map((rect) => Math.round(rect.top))).size; })()`);
    expect(await lines(`#keys tr[data-key-id="${made.id}"] td:nth-child(5)`)).toBe(1);
    await page.locator(`#keys tr[data-key-id="${made.id}"]`).screenshot({ path: join(SCREENSHOTS, "console-operator-last-used-1280.png") });
    await context.close();

    const { page: phone, close } = await signedIn(token, PHONE);
    // Each choice is as wide as its longest option, so none is cut ("hosting: as the dat").
    const cut = await phone.evaluate(`[...document.querySelectorAll("#correction-signals select")].filter((select) => {
      const whole = select.cloneNode(true);
      whole.style.cssText = "position: absolute; visibility: hidden; width: max-content; min-width: 0; flex: none";
      document.body.append(whole);
      const wanted = whole.getBoundingClientRect().width;
      whole.remove();
      return select.getBoundingClientRect().width < wanted - 0.5;
    }).map((select) => select.id)`);
    expect(cut).toEqual([]);
    expect(await pageOverflow(phone)).toBe(0);
    await phone.locator("#corrections-section").screenshot({ path: join(SCREENSHOTS, "console-operator-corrections-390.png") });
    await close();
  });

  for (const [width, viewport] of [["desktop", DESKTOP], ["phone", PHONE]] as const) {
    test(`a read-only token (${width}): no form that changes something, the Deliveries still there`, async () => {
      const { page, errors, close } = await signedIn(reader, viewport);
      await page.locator("#read-only-note").waitFor({ state: "visible" });
      await page.locator("#webhooks tbody tr[data-webhook-id]").first().waitFor();
      expect(await page.locator("#correction-form").isHidden()).toBe(true);
      expect(await page.locator("#add-webhook-form").isHidden()).toBe(true);
      const webhook = page.locator("#webhooks tbody tr[data-webhook-id]").first();
      for (const label of ["Send test", "Remove"]) expect(await webhook.locator("button", { hasText: label }).isVisible()).toBe(false);
      expect(await page.locator("#plans button").evaluateAll((buttons) => buttons.filter((button) => (button as { offsetParent: unknown }).offsetParent !== null).length)).toBe(0);
      const deliveries = webhook.locator("button", { hasText: "Deliveries" });
      expect(await deliveries.isVisible()).toBe(true);
      expect(await deliveries.isEnabled()).toBe(true);
      // A webhook's path may hold its receiver's secret: the list, the deliveries' title and the audit log show its origin and /… alone.
      expect(await webhook.locator("td.url span.mono").first().textContent()).toBe("http://127.0.0.1:9/…");
      await page.locator("#audit-entries tbody tr[data-action='webhook.created']").first().waitFor();
      expect(await page.content()).not.toContain("a-long-path");
      await page.screenshot({ path: join(SCREENSHOTS, `console-operator-read-only-${width}.png`), fullPage: true });
      expect(errors).toEqual([]);
      await close();
    });
  }

  test("a plan typed into and not saved survives the page drawing the plans again; Enter saves a row", async () => {
    const { page, errors, close } = await signedIn(token);
    const standardBatch = page.locator("#plans tr[data-plan='standard'] input[aria-label='Max batch of standard']");
    await standardBatch.fill("2222");
    await page.fill("#plans tr[data-plan=''] input[aria-label=\"New plan's name\"]", "gold");
    // Another action draws the plans again.
    const row = page.locator("#keys tr[data-key-id]", { hasText: "customer-01" });
    page.once("dialog", (dialog) => void dialog.accept());
    await row.locator("select.key-plan").selectOption("standard");
    await page.locator("#keys tr.note-row", { hasText: "is now on plan standard" }).waitFor();
    expect(await standardBatch.inputValue()).toBe("2222");
    expect(await page.inputValue("#plans tr[data-plan=''] input[aria-label=\"New plan's name\"]")).toBe("gold");

    // Enter in a field saves its row; what was saved is what the row shows after.
    await page.fill("#plans tr[data-plan=''] input[aria-label='Max batch of the new plan']", "5");
    await page.fill("#plans tr[data-plan=''] input[aria-label='Units a month of the new plan']", "100");
    await page.fill("#plans tr[data-plan=''] input[aria-label='Requests a second of the new plan']", "3");
    await page.press("#plans tr[data-plan=''] input[aria-label='Requests a second of the new plan']", "Enter");
    await page.locator("#plans tr[data-plan='gold'] + tr.note-row", { hasText: "Plan gold saved" }).waitFor();
    expect(await page.inputValue("#plans tr[data-plan=''] input[aria-label=\"New plan's name\"]")).toBe("");
    // The other row's edit is still there, not saved.
    expect(await standardBatch.inputValue()).toBe("2222");
    const plans = (await (await fetch(`${admin}/admin/v1/plans`, { headers: { authorization: `Bearer ${token}` } })).json()) as { plans: { name: string; max_batch_size: number }[] };
    expect(plans.plans.find((plan) => plan.name === "standard")?.max_batch_size).not.toBe(2222);
    expect(plans.plans.find((plan) => plan.name === "gold")?.max_batch_size).toBe(5);
    expect(errors).toEqual([]);
    await close();
  });

  test("a refused plan change leaves the key's row showing the plan it is on", async () => {
    const { page, close } = await signedIn(token);
    const row = page.locator("#keys tr[data-key-id]", { hasText: "customer-02" });
    const id = (await row.getAttribute("data-key-id"))!;
    // Revoked behind the page's back: the change is refused.
    await fetch(`${admin}/admin/v1/keys/${id}/revoke`, { method: "POST", headers: { authorization: `Bearer ${token}` } });
    page.once("dialog", (dialog) => void dialog.accept());
    await row.locator("select.key-plan").selectOption("unlimited");
    await page.locator(`#keys tr[data-key-id="${id}"] + tr.note-row.note-error`).waitFor();
    expect(await row.locator("select.key-plan").inputValue()).toBe("free");
    await close();
  });

  test("a server that does not answer is named as such, and the row keeps its plan", async () => {
    const { page, close } = await signedIn(token);
    const row = page.locator("#keys tr[data-key-id]", { hasText: "customer-03" });
    await page.route("**/admin/v1/keys/**", (route) => route.abort("connectionrefused"));
    page.once("dialog", (dialog) => void dialog.accept());
    await row.locator("select.key-plan").selectOption("unlimited");
    const note = page.locator("#keys tr[data-key-id] + tr.note-row.note-error");
    await note.waitFor();
    expect(await note.textContent()).toContain("the server may be down or restarting");
    expect(await note.textContent()).not.toContain("Failed to fetch");
    expect(await row.locator("select.key-plan").inputValue()).toBe("free");
    await close();
  });

  for (const [width, viewport] of [["desktop", DESKTOP], ["phone", PHONE], ["phone-420", { width: 420, height: 844 }]] as const) {
    test(`${width}: a 200-letter name, long URLs, the corrections and the audit log fit the screen`, async () => {
      const { page, errors, close } = await signedIn(token, viewport);
      await fetch(`${admin}/admin/v1/corrections/198.51.100.0_24`, {
        method: "PUT",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ country_code: "DE", as_name: "A very long name of a network operator that goes on and on", note: "moved" }),
      });
      await page.reload();
      await page.locator("#corrections tbody tr[data-cidr]").first().waitFor();
      await page.locator("#audit-entries tbody tr[data-action]").first().waitFor();
      expect(await pageOverflow(page)).toBe(0);
      // Every action of a key's row can be reached.
      const long = page.locator("#keys tr[data-key-id]", { hasText: LONG_NAME });
      const revoke = (await long.locator("button", { hasText: "Revoke" }).boundingBox())!;
      expect(revoke.x + revoke.width).toBeLessThanOrEqual(viewport.width);
      await page.screenshot({ path: join(SCREENSHOTS, `console-operator-long-names-${width}.png`), fullPage: true });
      expect(errors).toEqual([]);
      await close();
    });
  }

  test("a right-to-left override in a key's name stays inside the name", async () => {
    const { page, close } = await signedIn(token);
    const row = page.locator("#keys tr[data-key-id]", { hasText: "acme" });
    page.once("dialog", (dialog) => void dialog.accept());
    await row.locator("select.key-plan").selectOption("standard");
    const note = page.locator("#keys tr.note-row", { hasText: "is now on plan standard" });
    await note.waitFor();
    // The name is isolated (<bdi>): the sentence around it reads in its own order.
    expect(await note.locator("bdi").textContent()).toBe(RTL_NAME);
    expect(await note.textContent()).toBe(`Key ${RTL_NAME} is now on plan standard; its secret is unchanged.`);
    await close();
  });

  test("a right-to-left override in a metadata value, a correction's note or AS name stays inside it: the audit log's lines and the corrections' fields read in order", async () => {
    // An override with no closing character: unisolated, it turns around the rest of its line.
    const EVIL = "\u202Eevil";
    const call = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${admin}${path}`, { method, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
      expect({ path, status: response.status }).toEqual({ path, status: 200 });
      return response.json() as Promise<Record<string, unknown>>;
    };
    const { keys } = (await call("GET", "/admin/v1/keys")) as { keys: { id: string; name: string }[] };
    const id = keys.find((key) => key.name === "customer-39")!.id;
    await call("PATCH", `/admin/v1/keys/${id}`, { metadata: { note: EVIL } });
    await call("PATCH", `/admin/v1/keys/${id}`, { metadata: null });
    await call("PUT", "/admin/v1/corrections/100.64.0.0_24", { as_name: EVIL, city: "Berlin", note: EVIL });
    await call("PUT", "/admin/v1/corrections/100.64.0.0_24", { as_name: EVIL, city: "Berlin", note: "fixed" });
    const { page, close } = await signedIn(token);
    /**
     * The left edges of two pieces of a line's text on the screen, in CSS pixels, found in
     * its text nodes whatever elements hold them: the second is right of the first when
     * the line reads in order.
     */
    const edges = (line: Locator, first: string, second: string) =>
      // The page's DOM is not in this file's types: `any` for what runs in the browser.
      line.evaluate(
        (element: any, pieces: string[]) => {
          const page = globalThis as any;
          const walker = page.document.createTreeWalker(element, page.NodeFilter.SHOW_TEXT);
          const nodes: any[] = [];
          for (let node = walker.nextNode(); node; node = walker.nextNode()) nodes.push(node);
          const text = nodes.map((node) => node.data as string).join("");
          return pieces.map((piece) => {
            let at = text.indexOf(piece);
            if (at < 0) throw new Error(`${piece} is not in ${text}`);
            for (const node of nodes) {
              if (at < node.data.length) {
                const range = page.document.createRange();
                range.setStart(node, at);
                range.setEnd(node, at + 1);
                return range.getBoundingClientRect().left as number;
              }
              at -= node.data.length;
            }
            return Number.NaN;
          });
        },
        [first, second],
      ) as Promise<[number, number]>;
    const inOrder = async (line: Locator, first: string, second: string) => {
      const [left, right] = await edges(line, first, second);
      expect({ text: await line.textContent(), first, second, inOrder: right > left }).toEqual({ text: await line.textContent(), first, second, inOrder: true });
    };
    const entry = (action: string, target: string) => page.locator(`#audit-entries tbody tr[data-action='${action}']`, { hasText: target }).first();
    // "metadata: {"note":"‮evil"} → none": the arrow, then none.
    const metadata = entry("key.updated", id).locator(".audit-changes div", { hasText: "→ none" });
    await metadata.waitFor();
    expect(await metadata.textContent()).toBe(`metadata: {"note":"${EVIL}"} → none`);
    await inOrder(metadata, "→", "none");
    // "note: ‮evil → fixed".
    const note = entry("correction.updated", "correction:100.64.0.0/24").locator(".audit-changes div", { hasText: "fixed" });
    expect(await note.textContent()).toBe(`note: ${EVIL} → fixed`);
    await inOrder(note, "→", "fixed");
    // The corrections' list: "as_name ‮evil · city Berlin".
    const fields = page.locator("#corrections tr[data-cidr='100.64.0.0/24'] td").nth(1);
    expect(await fields.textContent()).toBe(`as_name ${EVIL} · city Berlin`);
    await inOrder(fields, "city", "Berlin");
    await page.locator("#audit").screenshot({ path: join(SCREENSHOTS, "console-operator-audit-rtl.png") });
    await close();
    await call("DELETE", "/admin/v1/corrections/100.64.0.0_24");
  });

  test("the key editor: Escape closes it and focus goes back to the row it was opened from", async () => {
    const { page, close } = await signedIn(token);
    const row = page.locator("#keys tr[data-key-id]", { hasText: "customer-30" });
    await row.locator("button", { hasText: "Edit" }).click();
    await page.locator("#key-editor").waitFor({ state: "visible" });
    await page.keyboard.press("Escape");
    await page.locator("#key-editor").waitFor({ state: "hidden" });
    expect(await page.evaluate("document.activeElement?.dataset.editKey ?? ''")).toBe(await row.getAttribute("data-key-id"));
    expect(await inView(page, `#keys tr[data-key-id="${await row.getAttribute("data-key-id")}"]`)).toBe(true);

    // Saved: the message beside the row, focus on its Edit button.
    await row.locator("button", { hasText: "Edit" }).click();
    await page.fill("#key-editor-metadata", '{"tier": "b"}');
    await page.click("#key-editor-save");
    await page.locator("#keys tr[data-key-id] + tr.note-row", { hasText: "Key customer-30 saved" }).waitFor();
    expect(await page.evaluate("document.activeElement?.dataset.editKey ?? ''")).toBe(await row.getAttribute("data-key-id"));
    await close();
  });

  test("the audit log follows today when the page was opened the day before, and says when a span holds more than it shows", async () => {
    const context = await openContext(browser, { viewport: DESKTOP });
    const page = await context.newPage();
    // Opened yesterday, late (UTC).
    const now = Date.now();
    await page.clock.install({ time: now - 86_400_000 });
    await page.goto(`${admin}/console#token=${token}`);
    await page.locator("#keys tbody tr[data-key-id]").first().waitFor();
    await page.clock.setSystemTime(now);
    await page.fill("#new-key-name", "made-today");
    await page.click("#create-key-form button[type=submit]");
    await page.locator("#keys tr.note-row", { hasText: "made-today created" }).waitFor();
    await page.locator("#audit-entries tbody tr[data-action='key.created']", { hasText: "made-today" }).waitFor();
    expect(await page.inputValue("#audit-to")).toBe(new Date(now).toISOString().slice(0, 10));
    await context.close();

    // More changes than the page shows: it says so.
    const store = SqliteStore.open(state);
    const log = new AuditLog(store);
    for (let i = 1; i <= 1000; i++) {
      await store.setPlan("bulk", { maxBatchSize: i, monthlyUnits: null, rateLimit: null }, () => log.change({ actor: "cli", action: "plan.updated", target: "plan:bulk", changes: { max_batch_size: { from: i - 1, to: i } } }));
    }
    await store.close();
    const { page: full, close } = await signedIn(token);
    await full.locator("#audit-count", { hasText: "the newest 1,000 changes; there are more" }).waitFor();
    expect(await full.locator("#audit-entries tbody tr").count()).toBe(1000);
    // A refused span takes the rows of the last one away.
    await full.fill("#audit-from", "2026-02-01");
    await full.fill("#audit-to", "2026-01-01");
    await full.click("#audit-form button[type=submit]");
    await full.locator("#audit-error").waitFor({ state: "visible" });
    expect(await full.locator("#audit-entries tbody tr").count()).toBe(0);
    expect(await full.locator("#audit-count").textContent()).toBe("");
    await close();
  });

  for (const [width, viewport] of [["phone", PHONE], ["phone-420", { width: 420, height: 844 }]] as const) {
    test(`${width}: a plan's limit boxes line up, each with its tick beside it; the audit log's two day boxes are as wide as each other`, async () => {
      const { page, close } = await signedIn(token, viewport);
      const row = page.locator("#plans tr[data-plan='free']");
      // Units a month and requests a second: the limits that may be unlimited.
      const cells = row.locator("td.limit", { has: page.locator("label.unlimited") });
      expect(await cells.count()).toBe(2);
      const lefts: number[] = [];
      for (let i = 0; i < 2; i++) {
        const box = (await cells.nth(i).locator("input[type=number]").boundingBox())!;
        const tick = (await cells.nth(i).locator("label.unlimited").boundingBox())!;
        lefts.push(Math.round(box.x));
        // Beside the box, on its line, and one line high.
        expect(tick.x).toBeGreaterThanOrEqual(box.x + box.width);
        expect(tick.y + tick.height / 2).toBeGreaterThan(box.y);
        expect(tick.y + tick.height / 2).toBeLessThan(box.y + box.height);
        expect(tick.height).toBeLessThan(box.height + 4);
      }
      expect(lefts[0]).toBe(lefts[1]!);
      const from = (await page.locator("#audit-from").boundingBox())!;
      const to = (await page.locator("#audit-to").boundingBox())!;
      expect(Math.abs(from.width - to.width)).toBeLessThanOrEqual(1);
      expect(from.height).toBeLessThan(60);
      await close();
    });
  }

  test("a span of exactly the most the page shows is shown whole, not said to hold more; a plan's creation reads its limits", async () => {
    const store = SqliteStore.open(state);
    const onDay = (day: string) => new AuditLog(store, () => new Date(`${day}T12:00:00.000Z`));
    const log = onDay("2026-01-15");
    for (let i = 1; i <= 1000; i++) {
      await store.setPlan("exact", { maxBatchSize: i, monthlyUnits: null, rateLimit: null }, () => log.change({ actor: "cli", action: "plan.updated", target: "plan:exact", changes: { max_batch_size: { from: i - 1, to: i } } }));
    }
    await store.setPlan("opened", { maxBatchSize: 7, monthlyUnits: null, rateLimit: null }, () =>
      onDay("2026-01-16").change({ actor: "cli", action: "plan.created", target: "plan:opened", changes: { max_batch_size: { from: null, to: 7 }, monthly_units: { from: null, to: null }, rate_limit: { from: null, to: null } } }),
    );
    await store.close();
    const { page, close } = await signedIn(token);
    const showSpan = async (from: string, to: string) => {
      await page.fill("#audit-from", from);
      await page.fill("#audit-to", to);
      await page.click("#audit-form button[type=submit]");
    };
    await showSpan("2026-01-15", "2026-01-15");
    await page.locator("#audit-count", { hasText: "1000 changes" }).waitFor();
    expect(await page.locator("#audit-entries tbody tr").count()).toBe(1000);
    await showSpan("2026-01-15", "2026-01-16");
    await page.locator("#audit-count", { hasText: "the newest 1,000 changes; there are more" }).waitFor();
    const created = page.locator("#audit-entries tbody tr[data-action='plan.created']", { hasText: "plan:opened" });
    expect(await created.locator(".audit-changes div").allTextContents()).toEqual(["max_batch_size: 7", "monthly_units: unlimited", "rate_limit: unlimited"]);
    await close();
  });

  test("a day that holds more changes than a page: Older entries reaches its oldest, Newer entries comes back", async () => {
    const store = SqliteStore.open(state);
    const at = (time: string) => new AuditLog(store, () => new Date(`2026-01-20T${time}Z`));
    // The day's first change, then 1,036 in one millisecond.
    const oldest = await store.createKey("oldest-of-the-day", "free", undefined, (issued) =>
      at("00:00:00.000").change({ actor: "cli", action: "key.created", target: issued.key.id, changes: { name: { from: null, to: "oldest-of-the-day" } } }),
    );
    const burst = at("09:30:00.000");
    for (let i = 1; i <= 1036; i++) {
      await store.setPlan("burst", { maxBatchSize: i, monthlyUnits: null, rateLimit: null }, () => burst.change({ actor: "cli", action: "plan.updated", target: "plan:burst", changes: { max_batch_size: { from: i - 1, to: i } } }));
    }
    await store.close();
    const { page, errors, close } = await signedIn(token);
    await page.fill("#audit-from", "2026-01-20");
    await page.fill("#audit-to", "2026-01-20");
    await page.click("#audit-form button[type=submit]");
    // The recent days' page it signed in on may read the same count: wait for the day's newest entry.
    await page.locator("#audit-entries tbody tr", { hasText: "max_batch_size: 1035 → 1036" }).first().waitFor();
    await page.locator("#audit-count", { hasText: "the newest 1,000 changes; there are more" }).waitFor();
    expect(await page.locator("#audit-entries tbody tr[data-action='key.created']").count()).toBe(0);
    expect(await page.locator("#audit-newer").isVisible()).toBe(false);
    await page.locator("#audit-pages").screenshot({ path: join(SCREENSHOTS, "console-audit-pager.png") });

    await page.click("#audit-older");
    await page.locator("#audit-count", { hasText: "changes 1,001–1,037, newest first; the oldest of these days" }).waitFor();
    const rows = page.locator("#audit-entries tbody tr");
    expect(await rows.count()).toBe(37);
    expect(await rows.last().getAttribute("data-action")).toBe("key.created");
    expect(await rows.last().textContent()).toContain(oldest.key.id);
    expect(await rows.first().textContent()).toContain("max_batch_size: 35 → 36");
    expect(await page.locator("#audit-older").isVisible()).toBe(false);
    await page.locator("#audit").screenshot({ path: join(SCREENSHOTS, "console-audit-oldest-page.png") });

    await page.click("#audit-newer");
    await page.locator("#audit-count", { hasText: "the newest 1,000 changes; there are more" }).waitFor();
    expect(await rows.count()).toBe(1000);
    expect(await rows.first().textContent()).toContain("max_batch_size: 1035 → 1036");
    expect(errors).toEqual([]);
    await close();
  });

  test("Older entries clicked twice before its page comes shows the second page once, counted as such; Newer entries goes back to the newest", async () => {
    const store = SqliteStore.open(state);
    const log = new AuditLog(store, () => new Date("2026-01-22T10:00:00.000Z"));
    for (let i = 1; i <= 2001; i++) {
      await store.setPlan("double", { maxBatchSize: i, monthlyUnits: null, rateLimit: null }, () => log.change({ actor: "cli", action: "plan.updated", target: "plan:double", changes: { max_batch_size: { from: i - 1, to: i } } }));
    }
    await store.close();
    const { page, errors, close } = await signedIn(token);
    await page.fill("#audit-from", "2026-01-22");
    await page.fill("#audit-to", "2026-01-22");
    await page.click("#audit-form button[type=submit]");
    // The page signed in on shows the recent days' entries, whose count may read the
    // same: the span asked for is there once its newest entry is.
    await page.locator("#audit-entries tbody tr", { hasText: "max_batch_size: 2000 → 2001" }).first().waitFor();
    await page.locator("#audit-count", { hasText: "the newest 1,000 changes; there are more" }).waitFor();
    const rows = page.locator("#audit-entries tbody tr");
    expect(await rows.first().textContent()).toContain("max_batch_size: 2000 → 2001");

    // Both clicks land before the first one's page can have come.
    await page.evaluate('(() => { const older = document.getElementById("audit-older"); older.click(); older.click(); })()');
    await page.locator("#audit-entries tbody tr", { hasText: "max_batch_size: 1000 → 1001" }).waitFor();
    expect(await page.locator("#audit-count").textContent()).toBe("changes 1,001–2,000, newest first; there are more");
    expect(await rows.count()).toBe(1000);
    expect(await rows.first().textContent()).toContain("max_batch_size: 1000 → 1001");
    expect(await rows.last().textContent()).toContain("max_batch_size: 1 → 2");

    await page.click("#audit-newer");
    await page.locator("#audit-count", { hasText: "the newest 1,000 changes; there are more" }).waitFor();
    expect(await rows.first().textContent()).toContain("max_batch_size: 2000 → 2001");
    expect(await page.locator("#audit-newer").isVisible()).toBe(false);
    expect(errors).toEqual([]);
    await close();
  });

  test("a span's entries that come after another span was asked for are dropped: the page shows the span last asked for", async () => {
    const store = SqliteStore.open(state);
    for (const [day, plan] of [["2026-01-23", "asked-first"], ["2026-01-24", "asked-second"]] as const) {
      const log = new AuditLog(store, () => new Date(`${day}T10:00:00.000Z`));
      await store.setPlan(plan, { maxBatchSize: 1, monthlyUnits: null, rateLimit: null }, () => log.change({ actor: "cli", action: "plan.created", target: `plan:${plan}`, changes: { max_batch_size: { from: null, to: 1 } } }));
    }
    await store.close();
    const { page, errors, close } = await signedIn(token);
    // The first span's answer is held until the second span's page is shown.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route(/\/admin\/v1\/audit\?from=2026-01-23/, async (route) => {
      await held;
      await route.continue();
    });
    const showSpan = async (day: string) => {
      await page.fill("#audit-from", day);
      await page.fill("#audit-to", day);
      await page.click("#audit-form button[type=submit]");
    };
    await showSpan("2026-01-23");
    const lateAnswer = page.waitForResponse(/\/admin\/v1\/audit\?from=2026-01-23/);
    await showSpan("2026-01-24");
    await page.locator("#audit-entries tbody tr", { hasText: "plan:asked-second" }).waitFor();
    release();
    await (await lateAnswer).finished();
    // A turn of the page's tasks after the answer, for it to be drawn were it not dropped.
    await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 0)));
    const rows = page.locator("#audit-entries tbody tr");
    expect(await rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain("plan:asked-second");
    expect(await page.locator("#audit-count").textContent()).toBe("1 change");
    expect(errors).toEqual([]);
    await close();
  });
});

describe("the console keeps each change deliberate, seen and in its place", () => {
  const authorized = (method: string, path: string, body?: unknown) =>
    fetch(`${admin}${path}`, { method, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  const planOf = async (name: string) => ((await (await authorized("GET", "/admin/v1/plans")).json()) as { plans: { name: string }[] }).plans.find((plan) => plan.name === name);
  const activeLabel = (page: Page) => page.evaluate("document.activeElement?.getAttribute('aria-label') ?? document.activeElement?.tagName ?? ''") as Promise<string>;

  test("Add plan with a name a plan has refuses it beside the row, naming the plan whose row edits it; that plan's limits stay", async () => {
    const { page, errors, close } = await signedIn(token);
    const before = await planOf("free");
    const row = "#plans tr[data-plan='']";
    await page.fill(`${row} input[aria-label="New plan's name"]`, "free");
    await page.fill(`${row} input[aria-label='Max batch of the new plan']`, "1");
    await page.fill(`${row} input[aria-label='Units a month of the new plan']`, "1");
    await page.fill(`${row} input[aria-label='Requests a second of the new plan']`, "1");
    await page.click(`${row} button`);
    const note = page.locator(`${row} + tr.note-row.note-error`);
    await note.waitFor();
    expect(await note.textContent()).toBe("A plan named free exists already: to change its limits, edit its row (free) above. Give the new plan another name; nothing was saved");
    expect(await page.locator(`${row} input[aria-label="New plan's name"]`).getAttribute("aria-invalid")).toBe("true");
    expect(await planOf("free")).toEqual(before);
    expect(errors).toEqual([]);
    await close();
  });

  test("focus goes back to the same control of the row drawn anew: a plan saved with Enter, a key revoked", async () => {
    const { page, errors, close } = await signedIn(token);
    const units = page.locator("#plans tr[data-plan='free'] input[aria-label='Units a month of free']");
    await units.press("Enter");
    await page.locator("#plans tr[data-plan='free'] + tr.note-row", { hasText: "Plan free saved" }).waitFor();
    expect(await activeLabel(page)).toBe("Units a month of free");
    const row = page.locator("#keys tr[data-key-id]", { hasText: "customer-06" });
    const id = (await row.getAttribute("data-key-id"))!;
    page.once("dialog", (dialog) => void dialog.accept());
    await row.locator("button", { hasText: "Revoke" }).focus();
    await page.keyboard.press("Enter");
    await page.locator(`#keys tr[data-key-id="${id}"] + tr.note-row`, { hasText: "is revoked" }).waitFor();
    // A revoked key's row has no control left: the row itself holds focus, not <body>.
    expect(await page.evaluate("document.activeElement?.dataset.keyId ?? document.activeElement?.tagName")).toBe(id);
    expect(errors).toEqual([]);
    await close();
  });

  test("an arrow key on a key's plan asks first, naming the key and both plans; cancelled, the key and its row stay on the plan", async () => {
    const { page, errors, close } = await signedIn(token);
    const row = page.locator("#keys tr[data-key-id]", { hasText: "customer-05" });
    const id = (await row.getAttribute("data-key-id"))!;
    const select = row.locator("select.key-plan");
    const asked: string[] = [];
    page.once("dialog", (dialog) => {
      asked.push(dialog.message());
      void dialog.dismiss();
    });
    await select.focus();
    await page.keyboard.press("ArrowDown");
    for (let tries = 0; tries < 100 && asked.length === 0; tries++) await Bun.sleep(20);
    expect(asked[0]).toStartWith("Move \u2068customer-05\u2069 (" + id + ") from plan free to plan ");
    expect(await select.inputValue()).toBe("free");
    const listed = (await (await authorized("GET", "/admin/v1/keys")).json()) as { keys: { id: string; plan: string }[] };
    expect(listed.keys.find((key) => key.id === id)?.plan).toBe("free");
    expect(await page.locator(`#keys tr[data-key-id="${id}"] + tr.note-row`).count()).toBe(0);

    // Confirmed: moved, and focus is on the row's plan again after the keys are drawn anew.
    page.once("dialog", (dialog) => void dialog.accept());
    await select.selectOption("standard");
    await page.locator(`#keys tr[data-key-id="${id}"] + tr.note-row`, { hasText: "is now on plan standard" }).waitFor();
    expect(await activeLabel(page)).toBe("Plan of customer-05");
    expect(errors).toEqual([]);
    await close();
  });

  test("a webhook added or removed and a correction set or removed show in the audit log at once", async () => {
    const { page, errors, close } = await signedIn(token);
    await page.locator("#audit-entries tbody tr[data-action]").first().waitFor();
    const entry = (action: string, target: string) => page.locator(`#audit-entries tbody tr[data-action='${action}']`, { hasText: target }).first();
    await page.fill("#webhook-url", "http://127.0.0.1:9/audited");
    await page.locator("#webhook-events input[value='key.created']").check();
    await page.click("#add-webhook-form button[type=submit]");
    const webhook = page.locator("#webhooks tr[data-webhook-id]", { hasText: "/audited" });
    await webhook.waitFor();
    const id = (await webhook.getAttribute("data-webhook-id"))!;
    await entry("webhook.created", id).waitFor();
    page.once("dialog", (dialog) => void dialog.accept());
    await webhook.locator("button", { hasText: "Remove" }).click();
    await entry("webhook.removed", id).waitFor();

    await page.fill("#correction-cidr", "192.0.2.0/24");
    await page.fill("#correction-country", "NL");
    await page.click("#correction-form button[type=submit]");
    await entry("correction.created", "192.0.2.0/24").waitFor();
    page.once("dialog", (dialog) => void dialog.accept());
    await page.locator("#corrections tr[data-cidr='192.0.2.0/24'] button", { hasText: "Remove" }).click();
    await entry("correction.removed", "192.0.2.0/24").waitFor();
    expect(errors).toEqual([]);
    await close();
  });

  test("signing out forgets what was typed: a correction being edited, a webhook's URL, a new key's name, an AS looked up", async () => {
    await authorized("PUT", "/admin/v1/corrections/203.0.113.0_24", { country_code: "FR", note: "left open" });
    const { page, errors, close } = await signedIn(token);
    await page.locator("#corrections tr[data-cidr='203.0.113.0/24'] button", { hasText: "Edit" }).click();
    await page.locator("#correction-editing").waitFor({ state: "visible" });
    await page.fill("#correction-city", "Lyon");
    await page.fill("#webhook-url", "http://127.0.0.1:9/typed-before-sign-out");
    await page.locator("#webhook-events input[value='key.revoked']").check();
    await page.fill("#new-key-name", "typed-before-sign-out");
    await page.fill("#asn-input", "AS64500");
    await page.click("#sign-out");
    await page.fill("#token-input", token);
    await page.click("#sign-in-form button[type=submit]");
    await page.locator("#corrections tr[data-cidr]").first().waitFor();
    expect(await page.locator("#correction-editing").isHidden()).toBe(true);
    expect(await page.locator("#correction-cancel").isHidden()).toBe(true);
    const values = await page.evaluate(`[...document.querySelectorAll("#signed-in input:not([type=date]), #signed-in textarea")].filter((field) => field.type === "checkbox" ? field.checked : field.value !== "").map((field) => field.id || field.getAttribute("aria-label"))`);
    // The plans' limits are the only fields filled: drawn anew from the plans.
    expect((values as string[]).filter((name) => !/ of /.test(name ?? ""))).toEqual([]);
    expect(await page.locator("#correction-cidr").getAttribute("readonly")).toBeNull();
    expect(await page.locator("#correction-form button[type=submit]").textContent()).toBe("Set correction");
    expect(errors).toEqual([]);
    await close();
  });

  test("390 px: a webhook's long URL in its secret's title, a long key name in the editor and the top keys, a correction's long fields: the page does not scroll sideways", async () => {
    const longName = "y".repeat(120);
    const made = (await (await authorized("POST", "/admin/v1/keys", { name: longName })).json()) as { key: string };
    const used = await fetch(`${setup!.server.url}/v1/lookup`, { method: "POST", headers: { authorization: `Bearer ${made.key}`, "content-type": "application/json" }, body: '{"ip":"1.1.1.1"}' });
    expect(used.status).toBe(200);
    await authorized("PUT", "/admin/v1/corrections/198.18.0.0_15", { as_name: "N".repeat(150), privacy: { service: "S".repeat(150) }, note: "W".repeat(300) });
    const { page, errors, close } = await signedIn(token, PHONE);
    await page.locator("#top-keys tbody tr", { hasText: longName }).waitFor();
    // The top key's Units stay on the screen beside its wrapped name.
    const units = (await page.locator("#top-keys tbody tr", { hasText: longName }).locator("td").nth(2).boundingBox())!;
    expect(units.x + units.width).toBeLessThanOrEqual(PHONE.width);
    await page.locator("#top-keys").screenshot({ path: join(SCREENSHOTS, "console-operator-top-keys-390.png") });

    await page.fill("#webhook-url", `http://127.0.0.1:9/${"z".repeat(300)}`);
    await page.locator("#webhook-events input[value='key.created']").check();
    await page.click("#add-webhook-form button[type=submit]");
    await page.locator("#webhook-secret-panel").waitFor({ state: "visible" });
    await page.locator("#corrections tr[data-cidr='198.18.0.0/15'] button", { hasText: "Edit" }).click();
    await page.locator("#correction-editing").waitFor({ state: "visible" });
    await page.locator(`#keys tr[data-key-id]`, { hasText: longName }).locator("button", { hasText: "Edit" }).click();
    await page.locator("#key-editor").waitFor({ state: "visible" });
    expect(await pageOverflow(page)).toBe(0);
    for (const section of ["webhooks-card", "corrections-section", "key-editor"]) await page.locator(`#${section}`).screenshot({ path: join(SCREENSHOTS, `console-operator-long-text-${section}-390.png`) });
    expect(errors).toEqual([]);
    await close();
  });

  test("every field has a name a screen reader says; a key's metadata that is no object is refused in plain words, and the row's earlier message goes", async () => {
    const { page, errors, close } = await signedIn(token);
    const unnamed = await page.evaluate(`[...document.querySelectorAll("input, select, textarea")].filter((field) => field.labels.length === 0 && !field.getAttribute("aria-label") && !field.getAttribute("aria-labelledby")).map((field) => field.id || field.outerHTML)`);
    expect(unnamed).toEqual([]);

    const row = page.locator("#keys tr[data-key-id]", { hasText: "customer-07" });
    const id = (await row.getAttribute("data-key-id"))!;
    await row.locator("button", { hasText: "Edit" }).click();
    await page.fill("#key-editor-metadata", '{"tier": "c"}');
    await page.click("#key-editor-save");
    const saved = page.locator(`#keys tr[data-key-id="${id}"] + tr.note-row`, { hasText: "saved" });
    await saved.waitFor();
    await row.locator("button", { hasText: "Edit" }).click();
    await page.fill("#key-editor-metadata", "[1,2]");
    await page.click("#key-editor-save");
    await page.locator("#key-editor-error").waitFor({ state: "visible" });
    expect(await page.locator("#key-editor-error").textContent()).toBe('Metadata must be a JSON object of named values, not a list: write an object such as {"team": "maps"}, or leave it empty');
    expect(await saved.count()).toBe(0);
    await page.click("#key-editor-cancel");
    expect(errors).toEqual([]);
    await close();
  });

  test("an answer that is not JSON (a proxy's HTML 502) is named with its status, not a parser's complaint", async () => {
    const { page, close } = await signedIn(token);
    await page.route("**/admin/v1/plans/free", (route) => route.fulfill({ status: 502, contentType: "text/html", body: "<html><body>502 Bad Gateway</body></html>" }));
    await page.locator("#plans tr[data-plan='free'] button", { hasText: "Save" }).click();
    const note = page.locator("#plans tr[data-plan='free'] + tr.note-row.note-error");
    await note.waitFor();
    expect(await note.textContent()).toContain("did not answer PUT /admin/v1/plans/free properly (HTTP 502");
    expect(await note.textContent()).not.toContain("Unexpected token");
    await close();
  });
});

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Browser, type BrowserContext, type Page } from "playwright-core";
import { join } from "node:path";
import { openContext, SCREENSHOTS } from "../support/chromium.ts";
import { startConsoleServer, type ConsoleServer } from "../support/console-server.ts";
import { cli, type ServerProcess } from "../support/server-process.ts";
import { verify, WebhookReceiver } from "../support/webhook-receiver.ts";

/**
 * The console in a real browser: Debian's Chromium (`apt-get install chromium`; .ci/run
 * installs it), driven by playwright-core, against a real two-thread server. One browser
 * for the file. Screenshots go to test/screenshots/ (not kept in git) for review.
 */

let server: ServerProcess;
let admin: string;
let token: string;
let browser: Browser;
let state: string;
let setup: ConsoleServer | undefined;

beforeAll(async () => {
  setup = await startConsoleServer("console", ["--workers", "2"]);
  ({ state, server, admin, token, browser } = setup);
}, 120_000);

afterAll(() => setup?.close());

/** A new page in a fresh context (no saved token), recording console errors and every request it makes. */
async function openPage(width = 1280, height = 1000): Promise<{ context: BrowserContext; page: Page; errors: string[]; requests: string[] }> {
  const context = await openContext(browser, { viewport: { width, height } });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: admin });
  const page = await context.newPage();
  const errors: string[] = [];
  const requests: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error" || message.type() === "warning") errors.push(`${message.type()}: ${message.text()}`);
  });
  page.on("pageerror", (error) => errors.push(`page error: ${error.message}`));
  page.on("request", (request) => requests.push(request.url()));
  return { context, page, errors, requests };
}

const lookup = (key: string, ips: string[]) =>
  fetch(`${server.url}/v1/lookup/batch`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ ips }) });
const usagePlan = async (key: string) => ((await (await fetch(`${server.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } })).json()) as { plan?: { name: string } }).plan?.name;

describe("the console", () => {
  test("without a token it asks for one", async () => {
    const { context, page, errors } = await openPage();
    await page.goto(`${admin}/console`);
    await page.locator("#sign-in").waitFor({ state: "visible" });
    expect(await page.locator("#signed-in").isHidden()).toBe(true);
    expect(await page.locator("label[for=token-input]").textContent()).toBe("Admin token");
    expect(await page.title()).toBe("iplookup console");
    // A wrong token is refused on the form.
    await page.fill("#token-input", "ipla_wrong");
    await page.click("#sign-in-form button[type=submit]");
    await page.locator("#sign-in-error").waitFor({ state: "visible" });
    expect(await page.locator("#sign-in-error").textContent()).toContain("invalid_key");
    await page.screenshot({ path: join(SCREENSHOTS, "console-sign-in.png") });
    // The refused sign-in's 401 is the only complaint the browser makes.
    expect(errors.filter((error) => !error.includes("401"))).toEqual([]);
    await context.close();
  });

  test("signs in from #token=, creates a key whose secret shows once, charts its use, moves it to another plan, revokes it", async () => {
    const { context, page, errors, requests } = await openPage();
    await page.goto(`${admin}/console#token=${token}`);
    await page.locator("#signed-in").waitFor({ state: "visible" });
    // The fragment leaves the address bar (and history) at once; it was never sent.
    expect(page.url()).toBe(`${admin}/console`);
    expect(requests.some((url) => url.includes(token))).toBe(false);
    expect(await page.locator("#server-info").textContent()).toContain("2 workers");
    // The data set: sources, licences, age.
    const sources = await page.locator("#sources tbody").textContent();
    expect(sources).toContain("CC BY 4.0");
    expect(sources).toContain("@ip-location-db/asn");
    // Data built a moment ago (a fresh checkout, as in CI) is "just now", older data "… ago".
    expect(await page.locator("#data-summary").textContent()).toMatch(/built \d{4}-\d{2}-\d{2} .*\((just now|.* ago)\)/);

    // Create a key: the secret is shown once, and the copy button copies it.
    await page.fill("#new-key-name", "browser-made");
    await page.selectOption("#new-key-plan", "standard");
    await page.click("#create-key-form button[type=submit]");
    await page.locator("#secret-panel").waitFor({ state: "visible" });
    const secret = (await page.locator("#secret-value").textContent())!;
    expect(secret).toMatch(/^ipl_[A-Za-z0-9_-]{43}$/);
    await page.click("#copy-secret");
    await page.locator("#copy-secret", { hasText: "Copied" }).waitFor();
    // (Run in the page; the test's own types know no DOM.)
    expect(await page.evaluate("navigator.clipboard.readText()")).toBe(secret);
    const row = page.locator("#keys tbody tr[data-key-id]", { hasText: "browser-made" });
    await row.waitFor();
    const id = (await row.getAttribute("data-key-id"))!;
    expect(await row.locator(".key-plan").inputValue()).toBe("standard");
    await page.screenshot({ path: join(SCREENSHOTS, "console-new-key.png") });
    await page.click("#dismiss-secret");
    expect(await page.locator("#secret-panel").isHidden()).toBe(true);

    // The secret works on the public port; today's units show in the chart.
    expect((await lookup(secret, ["1.1.1.1", "8.8.8.8", "9.9.9.9"])).status).toBe(200);
    expect((await lookup(secret, ["2606:4700:4700::1111"])).status).toBe(200);
    await page.reload();
    await page.locator("#signed-in").waitFor({ state: "visible" });
    // Signed in again from the tab's session, and the secret is nowhere on the page any more.
    expect(await page.content()).not.toContain(secret);
    const today = new Date().toISOString().slice(0, 10);
    await page.locator("#usage-chart .uplot canvas").waitFor();
    expect(await page.locator("#usage-chart").getAttribute("data-today-units")).toBe("4");
    expect(await page.locator("#usage-summary").textContent()).toContain(`Today (${today}): 4 units in 2 requests`);
    expect(await page.locator("#top-keys tbody").textContent()).toContain("browser-made");
    expect(await page.locator("#keys tbody tr[data-key-id]", { hasText: "browser-made" }).locator("td.num").textContent()).toBe("4");
    // One key's chart.
    await page.selectOption("#usage-key", id);
    await page.locator("#usage-summary", { hasText: "4 units" }).waitFor();
    await page.screenshot({ path: join(SCREENSHOTS, "console.png"), fullPage: true });

    // Another plan, after confirming: every thread applies it within a second.
    page.once("dialog", (dialog) => void dialog.accept());
    await page.locator("#keys tbody tr[data-key-id]", { hasText: "browser-made" }).locator(".key-plan").selectOption("unlimited");
    // The message is beside the key's row, where the change was made, not in a banner.
    await page.locator(`#keys tr[data-key-id="${id}"] + tr.note-row`, { hasText: "is now on plan unlimited" }).waitFor();
    const moved = performance.now();
    while ((await usagePlan(secret)) !== "unlimited") {
      expect(performance.now() - moved).toBeLessThan(1000);
      await Bun.sleep(25);
    }

    // Revoke, after confirming: refused within a second.
    page.once("dialog", (dialog) => void dialog.accept());
    await page.locator("#keys tbody tr[data-key-id]", { hasText: "browser-made" }).locator("button", { hasText: "Revoke" }).click();
    await page.locator(`#keys tr[data-key-id="${id}"] + tr.note-row`, { hasText: "is revoked" }).waitFor();
    const revokedStatus = page.locator("#keys tbody tr[data-key-id]", { hasText: "browser-made" }).locator(".status-revoked");
    await revokedStatus.first().waitFor({ state: "attached" });
    expect(await revokedStatus.count()).toBe(1);
    const revoked = performance.now();
    while ((await lookup(secret, ["1.1.1.1"])).status !== 401) {
      expect(performance.now() - revoked).toBeLessThan(1000);
      await Bun.sleep(25);
    }
    expect(errors).toEqual([]);
    // Nothing came from anywhere but the admin listener.
    expect(requests.filter((url) => !url.startsWith(admin))).toEqual([]);
    await context.close();
  });

  test("the plans editor creates and changes plans; the sign-in form works; signing out forgets the token", async () => {
    const { context, page, errors } = await openPage();
    await page.goto(`${admin}/console`);
    await page.fill("#token-input", token);
    await page.click("#sign-in-form button[type=submit]");
    await page.locator("#signed-in").waitFor({ state: "visible" });

    const fresh = page.locator("#plans tbody tr[data-plan='']");
    await fresh.locator("input[aria-label=\"New plan's name\"]").fill("gold");
    await fresh.locator("input[type=number][aria-label^='Max batch']").fill("5");
    await fresh.locator("input[type=checkbox][aria-label^='Units a month']").check();
    await fresh.locator("input[type=number][aria-label^='Requests a second']").fill("20");
    await fresh.locator("button", { hasText: "Add plan" }).click();
    await page.locator("#plans tr[data-plan='gold'] + tr.note-row", { hasText: "Plan gold saved" }).waitFor();
    const gold = page.locator("#plans tbody tr[data-plan='gold']");
    await gold.waitFor();
    expect(await gold.locator("input[type=number][aria-label^='Units a month']").inputValue()).toBe("");
    expect(await gold.locator("input[type=checkbox][aria-label^='Units a month']").isChecked()).toBe(true);

    await gold.locator("input[type=number][aria-label^='Max batch']").fill("7");
    await gold.locator("button", { hasText: "Save" }).click();
    await page.locator("#plans tr[data-plan='gold'] + tr.note-row", { hasText: "7 a batch" }).waitFor();
    const plans = (await (await fetch(`${admin}/admin/v1/plans`, { headers: { authorization: `Bearer ${token}` } })).json()) as { plans: unknown[] };
    expect(plans.plans).toContainEqual({ name: "gold", max_batch_size: 7, monthly_units: null, rate_limit: 20 });
    // The new plan is offered for keys (once the page has drawn its lists again).
    const goldOption = page.locator("#new-key-plan option[value=gold]");
    await goldOption.first().waitFor({ state: "attached" });
    expect(await goldOption.count()).toBe(1);

    // A refused value says why, and changes nothing.
    await gold.locator("input[type=number][aria-label^='Max batch']").fill("0");
    await gold.locator("button", { hasText: "Save" }).click();
    const refusal = page.locator("#plans tr[data-plan='gold'] + tr.note-row.note-error");
    await refusal.waitFor();
    expect(await refusal.textContent()).toContain("Max batch must be a whole number");
    expect(await gold.locator("input[type=number][aria-label^='Max batch']").getAttribute("aria-invalid")).toBe("true");

    await page.click("#sign-out");
    await page.locator("#sign-in").waitFor({ state: "visible" });
    await page.reload();
    await page.locator("#sign-in").waitFor({ state: "visible" });
    expect(await page.locator("#signed-in").isHidden()).toBe(true);
    expect(errors).toEqual([]);
    await context.close();
  });
});

/** The widths the console is checked at: a desktop, and phones of 390 and 420 px. */
const WIDTHS = [
  { name: "desktop", width: 1280, height: 900 },
  { name: "phone-390", width: 390, height: 844 },
  { name: "phone-420", width: 420, height: 900 },
] as const;

async function signedIn(width: number, height: number) {
  const opened = await openPage(width, height);
  await opened.page.goto(`${admin}/console#token=${token}`);
  await opened.page.locator("#signed-in").waitFor({ state: "visible" });
  return opened;
}

/** Whether an element is inside the viewport (the operator sees it without scrolling). */
async function inView(page: Page, selector: string): Promise<boolean> {
  const box = await page.locator(selector).first().boundingBox();
  const height = page.viewportSize()!.height;
  return box !== null && box.y >= 0 && box.y + box.height <= height;
}

describe("the console's polish", () => {
  for (const { name, width, height } of WIDTHS) {
    test(`${name}: the page fits its width, the header spans it, a refused plan edit says why beside the plan`, async () => {
      const { context, page, errors } = await signedIn(width, height);
      const sizes = (await page.evaluate(
        `({ page: document.documentElement.scrollWidth, view: innerWidth, header: document.querySelector("header.top").getBoundingClientRect().width })`,
      )) as { page: number; view: number; header: number };
      expect(sizes.page).toBeLessThanOrEqual(sizes.view);
      expect(sizes.header).toBe(sizes.view);

      // Far down the page, at the plans: a refusal shows beside the plan, in view.
      const plan = page.locator("#plans tbody tr[data-plan='free']");
      await plan.scrollIntoViewIfNeeded();
      await plan.locator("input[type=number][aria-label^='Max batch']").fill("3000000000");
      await plan.locator("button", { hasText: "Save" }).click();
      const refusal = page.locator("#plans tr[data-plan='free'] + tr.note-row.note-error");
      await refusal.waitFor();
      expect(await refusal.textContent()).toContain("invalid_request");
      expect(await inView(page, "#plans tr.note-row")).toBe(true);
      expect(await page.locator("#message").isHidden()).toBe(true);
      await page.screenshot({ path: join(SCREENSHOTS, `console-plan-refused-${name}.png`) });
      await page.screenshot({ path: join(SCREENSHOTS, `console-full-${name}.png`), fullPage: true });
      expect(errors.filter((error) => !error.includes("400"))).toEqual([]);
      await context.close();
    });
  }

  for (const { name, width, height } of [WIDTHS[0], WIDTHS[1]]) test(`${name}: an empty units box is refused, never an unlimited plan; ticking unlimited makes one`, async () => {
    const planName = `silver-${name}`;
    const { context, page } = await signedIn(width, height);
    const fresh = page.locator("#plans tbody tr[data-plan='']");
    await fresh.locator("input[aria-label=\"New plan's name\"]").fill(planName);
    await fresh.locator("input[type=number][aria-label^='Max batch']").fill("50");
    await fresh.locator("input[type=number][aria-label^='Requests a second']").fill("5");
    await fresh.locator("button", { hasText: "Add plan" }).click();
    const refusal = page.locator("#plans tr[data-plan=''] + tr.note-row.note-error");
    await refusal.waitFor();
    expect(await refusal.textContent()).toContain("Units a month must be a whole number of at least 1, or tick “unlimited”");
    expect(await fresh.locator("input[type=number][aria-label^='Units a month']").getAttribute("aria-invalid")).toBe("true");
    const listed = async () => ((await (await fetch(`${admin}/admin/v1/plans`, { headers: { authorization: `Bearer ${token}` } })).json()) as { plans: { name: string; monthly_units: number | null }[] }).plans;
    expect((await listed()).some((plan) => plan.name === planName)).toBe(false);
    expect(await inView(page, "#plans tr.note-row")).toBe(true);
    await page.screenshot({ path: join(SCREENSHOTS, `console-plan-empty-units-${name}.png`) });
    await fresh.locator("input[type=checkbox][aria-label^='Units a month']").check();
    expect(await fresh.locator("input[type=number][aria-label^='Units a month']").isDisabled()).toBe(true);
    await fresh.locator("button", { hasText: "Add plan" }).click();
    await page.locator(`#plans tr[data-plan='${planName}'] + tr.note-row`, { hasText: "unlimited units a month" }).waitFor();
    expect((await listed()).find((plan) => plan.name === planName)?.monthly_units).toBeNull();
    await context.close();
  });

  for (const { name, width, height } of [WIDTHS[0], WIDTHS[1]]) {
    test(`${name}: one day of use: whole-unit y axis, a legend with the latest day before any hover, a week of days shown`, async () => {
      const created = JSON.parse(cli(["keys", "create", "--name", `chart-${name}`, "--json"], { IPLOOKUP_STATE: state }).stdout) as { id: string; key: string };
      await Bun.sleep(300);
      expect((await lookup(created.key, ["1.1.1.1", "8.8.8.8", "9.9.9.9"])).status).toBe(200);
      const { context, page, errors } = await signedIn(width, height);
      await page.selectOption("#usage-key", created.id);
      await page.locator("#usage-chart[data-today-units='3']").waitFor({ state: "attached" });
      const today = new Date().toISOString().slice(0, 10);
      const legend = page.locator("#usage-legend");
      expect(await legend.textContent()).toBe(`${today} 3 units · 1 request`);
      expect(await page.locator("#usage-summary").textContent()).toContain(`Today (${today}): 3 units in 1 request · `);
      expect((await page.locator("#usage-chart").textContent()) ?? "").not.toMatch(/Day:|Units:/i);
      const ticks = (await page.locator("#usage-chart").getAttribute("data-y-ticks"))!.split(",").map(Number);
      expect(ticks.length).toBeGreaterThan(1);
      for (const tick of ticks) expect(Number.isInteger(tick)).toBe(true);
      // A week is shown, the day of use at its end, not one bar at the edge of a month.
      const weekAgo = new Date(Date.parse(`${today}T00:00:00Z`) - 6 * 86_400_000).toISOString().slice(0, 10);
      expect(await page.locator("#usage-chart").getAttribute("data-shown-from")).toBe(weekAgo);
      // Hovering another day shows that day; leaving shows the latest again.
      const box = (await page.locator("#usage-chart .u-over").boundingBox())!;
      await page.mouse.move(box.x + box.width * 0.1, box.y + box.height / 2);
      await page.locator("#usage-legend", { hasText: "0 units" }).waitFor();
      await page.screenshot({ path: join(SCREENSHOTS, `console-chart-hover-${name}.png`) });
      await page.mouse.move(1, 1);
      await page.locator("#usage-legend", { hasText: `${today} 3 units` }).waitFor();
      await page.locator("#usage-chart").scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(SCREENSHOTS, `console-chart-${name}.png`) });
      expect(errors).toEqual([]);
      await context.close();
    });
  }

  test("a key chosen while the page still loads every key's use: the chart stays the key's when every key's answer comes after it", async () => {
    const chosen = JSON.parse(cli(["keys", "create", "--name", "chart-chosen", "--json"], { IPLOOKUP_STATE: state }).stdout) as { id: string; key: string };
    const other = JSON.parse(cli(["keys", "create", "--name", "chart-other", "--json"], { IPLOOKUP_STATE: state }).stdout) as { id: string; key: string };
    await Bun.sleep(300);
    expect((await lookup(chosen.key, ["1.1.1.1", "8.8.8.8"])).status).toBe(200);
    expect((await lookup(other.key, ["1.1.1.1", "8.8.8.8", "9.9.9.9"])).status).toBe(200);
    const { context, page, errors } = await openPage();
    // Every key's use, which the page asks for as it signs in, is answered only once let go.
    let letGo!: () => void;
    const held = new Promise<void>((resolve) => (letGo = resolve));
    await page.route(/\/admin\/v1\/usage(\?|$)/, async (route) => {
      if (!new URL(route.request().url()).searchParams.has("key")) await held;
      await route.continue();
    });
    await page.goto(`${admin}/console#token=${token}`);
    await page.locator("#signed-in").waitFor({ state: "visible" });
    await page.selectOption("#usage-key", chosen.id);
    await page.locator("#usage-chart[data-today-units='2']").waitFor({ state: "attached" });
    const everyKeys = page.waitForResponse((response) => new URL(response.url()).pathname === "/admin/v1/usage" && !new URL(response.url()).searchParams.has("key"));
    letGo();
    await (await everyKeys).finished();
    // The page has read that answer: a few turns of its event loop after it came.
    await page.evaluate("new Promise((resolve) => setTimeout(() => requestAnimationFrame(() => setTimeout(resolve, 50)), 0))");
    expect(await page.locator("#usage-key").inputValue()).toBe(chosen.id);
    expect(await page.locator("#usage-chart").getAttribute("data-today-units")).toBe("2");
    expect(errors).toEqual([]);
    await context.close();
  });

  for (const { name, width, height } of [WIDTHS[0], WIDTHS[1]]) test(`${name}: a data set whose newest source is older than 35 days is flagged as stale`, async () => {
    // The shipped sources are of 2026-06-17: months old.
    const { context, page } = await signedIn(width, height);
    await page.locator("#stale-warning").waitFor();
    expect(await page.locator("#stale-warning").textContent()).toContain("older than 35 days");
    expect(await page.locator("#stale-data").isVisible()).toBe(true);
    expect(await page.locator("#sources .stale-badge").count()).toBe(2);
    await page.locator("#data-card").scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SCREENSHOTS, `console-stale-data-${name}.png`) });
    await context.close();
  });

  for (const { name, width, height } of [WIDTHS[0], WIDTHS[1]]) test(`${name}: #token= typed into a tab already on /console signs in and leaves the address bar`, async () => {
    const { context, page, requests } = await openPage(width, height);
    await page.goto(`${admin}/console`);
    await page.locator("#sign-in").waitFor({ state: "visible" });
    // The same document, a new fragment: only hashchange tells the page.
    await page.goto(`${admin}/console#token=${token}`);
    await page.locator("#signed-in").waitFor({ state: "visible" });
    expect(page.url()).toBe(`${admin}/console`);
    expect(requests.some((url) => url.includes(token))).toBe(false);
    await context.close();
  });

  test("a key created while the page still loads: made on the default plan, and its row and its note stay when the sign-in's answers come after", async () => {
    const { context, page, errors } = await openPage();
    // The key list the page asks for as it signs in (and so its plans, asked with it) is
    // answered only once let go, as the server answered it when asked: without the key made meanwhile.
    let letGo!: () => void;
    const held = new Promise<void>((resolve) => (letGo = resolve));
    let first = true;
    await page.route(/\/admin\/v1\/keys$/, async (route) => {
      if (route.request().method() !== "GET" || !first) return route.continue();
      first = false;
      const answered = await route.fetch();
      await held;
      await route.fulfill({ response: answered });
    });
    await page.goto(`${admin}/console#token=${token}`);
    await page.locator("#signed-in").waitFor({ state: "visible" });
    await page.fill("#new-key-name", "made-while-loading");
    await page.click("#create-key-form button[type=submit]");
    const note = page.locator("#keys tr[data-key-id] + tr.note-row", { hasText: "made-while-loading created" });
    await note.waitFor();
    const stale = page.waitForResponse((response) => new URL(response.url()).pathname === "/admin/v1/keys" && response.request().method() === "GET");
    letGo();
    await (await stale).finished();
    // The page has read that answer: a few turns of its event loop after it came.
    await page.evaluate("new Promise((resolve) => setTimeout(() => requestAnimationFrame(() => setTimeout(resolve, 50)), 0))");
    expect(await note.isVisible()).toBe(true);
    expect(await page.locator("#keys tr[data-key-id]", { hasText: "made-while-loading" }).count()).toBe(1);
    const made = (JSON.parse(cli(["keys", "list", "--json"], { IPLOOKUP_STATE: state }).stdout) as { name: string; plan: string }[]).find((key) => key.name === "made-while-loading");
    expect(made?.plan).toBe("free");
    expect(errors).toEqual([]);
    await context.close();
  });

  test("a message answers where the action was, in view, not in a banner at the top", async () => {
    const { context, page } = await signedIn(420, 700);
    await page.locator("#create-key-form").scrollIntoViewIfNeeded();
    await page.fill("#new-key-name", "where-am-i");
    await page.click("#create-key-form button[type=submit]");
    const note = page.locator("#keys tr[data-key-id] + tr.note-row", { hasText: "where-am-i created" });
    await note.waitFor();
    await page.screenshot({ path: join(SCREENSHOTS, "console-key-created-phone.png") });
    expect(await page.locator("#message").isHidden()).toBe(true);
    expect(await inView(page, "#keys tr.note-row")).toBe(true);
    await context.close();
  });
});

describe("the console's webhooks page", () => {
  let secret = "";
  const receiver = new WebhookReceiver(() => secret);
  beforeAll(() => void receiver.start());
  afterAll(() => receiver.stop());

  for (const { name, width, height } of [WIDTHS[0], WIDTHS[2]]) {
    test(`${name}: add with the secret shown once, send a test (signed, delivered), see the delivery, remove`, async () => {
      const { context, page, errors } = await signedIn(width, height);
      await page.locator("#webhooks-card").scrollIntoViewIfNeeded();
      // No event ticked: refused beside the form.
      await page.fill("#webhook-url", `${receiver.url}?from=${name}`);
      await page.click("#add-webhook-form button[type=submit]");
      await page.locator("#add-webhook-form + p.note-error", { hasText: "Tick at least one event" }).waitFor();
      // A URL the server refuses: its reason, beside the form.
      await page.fill("#webhook-url", "ftp://127.0.0.1/x");
      await page.locator("#webhook-events input[value='key.created']").check();
      await page.click("#add-webhook-form button[type=submit]");
      await page.locator("#add-webhook-form + p.note-error", { hasText: "http:// or https://" }).waitFor();

      await page.fill("#webhook-url", `${receiver.url}?from=${name}`);
      await page.locator("#webhook-events input[value='usage.threshold']").check();
      await page.click("#add-webhook-form button[type=submit]");
      await page.locator("#webhook-secret-panel").waitFor({ state: "visible" });
      secret = (await page.locator("#webhook-secret-value").textContent())!;
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
      const row = page.locator("#webhooks tbody tr[data-webhook-id]", { hasText: `from=${name}` });
      await row.waitFor();
      const id = (await row.getAttribute("data-webhook-id"))!;
      expect(await row.textContent()).toContain("usage.threshold, key.created");
      await page.screenshot({ path: join(SCREENSHOTS, `console-webhook-added-${name}.png`), fullPage: true });
      await page.click("#webhook-dismiss-secret");
      expect(await page.content()).not.toContain(secret);

      const before = receiver.received.length;
      await row.locator("button", { hasText: "Send test" }).click();
      const note = page.locator(`#webhooks tr[data-webhook-id="${id}"] + tr.note-row`, { hasText: "Test event delivered: HTTP 200" });
      await note.waitFor();
      expect(await inView(page, "#webhooks tr.note-row")).toBe(true);
      const got = receiver.received[before]!;
      expect(verify(secret, got.headers, got.body)).toBe(true);
      expect(JSON.parse(got.body).type).toBe("webhook.test");
      const delivery = page.locator(`#deliveries tr[data-event-id="${got.headers["webhook-id"]}"]`);
      await delivery.waitFor();
      expect(await delivery.textContent()).toContain("delivered");
      expect(await delivery.textContent()).toContain("HTTP 200");
      await page.locator("#deliveries").scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(SCREENSHOTS, `console-webhook-tested-${name}.png`) });
      const sizes = (await page.evaluate(`({ page: document.documentElement.scrollWidth, view: innerWidth })`)) as { page: number; view: number };
      expect(sizes.page).toBeLessThanOrEqual(sizes.view);

      page.once("dialog", (dialog) => void dialog.accept());
      await row.locator("button", { hasText: "Remove" }).click();
      await page.locator("#webhooks-card .card-head + p.note", { hasText: `Webhook ${id} removed` }).waitFor();
      expect(await page.locator(`#webhooks tr[data-webhook-id="${id}"]`).count()).toBe(0);
      expect(errors.filter((error) => !error.includes("400"))).toEqual([]);
      await context.close();
    });
  }
});

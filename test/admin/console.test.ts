import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { heavyTurn } from "../support/heavy-turn.ts";
import { cli, startServerProcess, type ServerProcess } from "../support/server-process.ts";

/**
 * The console in a real browser: Debian's Chromium (`apt-get install chromium`; .ci/run
 * installs it), driven by playwright-core, against a real two-thread server. One browser
 * for the file. Screenshots go to test/screenshots/ (not kept in git) for review.
 */

const CHROMIUM = "/usr/bin/chromium";
const SCREENSHOTS = join(import.meta.dir, "..", "screenshots");
const dir = mkdtempSync(join(tmpdir(), "iplookup-console-"));
const state = join(dir, "state.db");

let server: ServerProcess;
let admin: string;
let token: string;
let browser: Browser;
let endTurn = () => {};

// The browser and the server take about 1.2 GB: a turn with the suite's other heavy files (see heavyTurn).
beforeAll(async () => {
  endTurn = await heavyTurn();
  mkdirSync(SCREENSHOTS, { recursive: true });
  token = (JSON.parse(cli(["admin", "create", "--name", "console", "--json"], { IPLOOKUP_STATE: state }).stdout) as { token: string }).token;
  server = await startServerProcess(["--state", state, "--workers", "2", "--admin-port", "0"]);
  admin = /"admin":"([^"]+)"/.exec(server.stderr())![1]!.replace(/\/$/, "");
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--headless"],
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
  endTurn();
});

/** A new page in a fresh context (no saved token), recording console errors and every request it makes. */
async function openPage(): Promise<{ context: BrowserContext; page: Page; errors: string[]; requests: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
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
    const row = page.locator("#keys tbody tr", { hasText: "browser-made" });
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
    expect(await page.locator("#keys tbody tr", { hasText: "browser-made" }).locator("td.num").textContent()).toBe("4");
    // One key's chart.
    await page.selectOption("#usage-key", id);
    await page.locator("#usage-summary", { hasText: "4 units" }).waitFor();
    await page.screenshot({ path: join(SCREENSHOTS, "console.png"), fullPage: true });

    // Another plan: every thread applies it within a second.
    await page.locator("#keys tbody tr", { hasText: "browser-made" }).locator(".key-plan").selectOption("unlimited");
    await page.locator("#message", { hasText: "is now on plan unlimited" }).waitFor();
    const moved = performance.now();
    while ((await usagePlan(secret)) !== "unlimited") {
      expect(performance.now() - moved).toBeLessThan(1000);
      await Bun.sleep(25);
    }

    // Revoke, after confirming: refused within a second.
    page.once("dialog", (dialog) => void dialog.accept());
    await page.locator("#keys tbody tr", { hasText: "browser-made" }).locator("button", { hasText: "Revoke" }).click();
    await page.locator("#message", { hasText: "is revoked" }).waitFor();
    // The message comes first, the table is drawn again right after it.
    const revokedStatus = page.locator("#keys tbody tr", { hasText: "browser-made" }).locator(".status-revoked");
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
    await fresh.locator("input[aria-label^='Max batch']").fill("5");
    await fresh.locator("input[aria-label^='Units a month']").fill("");
    await fresh.locator("input[aria-label^='Requests a second']").fill("20");
    await fresh.locator("button", { hasText: "Add plan" }).click();
    await page.locator("#message", { hasText: "Plan gold" }).waitFor();
    const gold = page.locator("#plans tbody tr[data-plan='gold']");
    await gold.waitFor();
    expect(await gold.locator("input[aria-label^='Units a month']").inputValue()).toBe("");

    await gold.locator("input[aria-label^='Max batch']").fill("7");
    await gold.locator("button", { hasText: "Save" }).click();
    await page.locator("#message", { hasText: "7 a batch" }).waitFor();
    const plans = (await (await fetch(`${admin}/admin/v1/plans`, { headers: { authorization: `Bearer ${token}` } })).json()) as { plans: unknown[] };
    expect(plans.plans).toContainEqual({ name: "gold", max_batch_size: 7, monthly_units: null, rate_limit: 20 });
    // The new plan is offered for keys (once the page has drawn its lists again).
    const goldOption = page.locator("#new-key-plan option[value=gold]");
    await goldOption.first().waitFor({ state: "attached" });
    expect(await goldOption.count()).toBe(1);

    // A refused value says why, and changes nothing.
    await gold.locator("input[aria-label^='Max batch']").fill("0");
    await gold.locator("button", { hasText: "Save" }).click();
    await page.locator("#message.error-message").waitFor();
    expect(await page.locator("#message").textContent()).toContain("max batch");

    await page.click("#sign-out");
    await page.locator("#sign-in").waitFor({ state: "visible" });
    await page.reload();
    await page.locator("#sign-in").waitFor({ state: "visible" });
    expect(await page.locator("#signed-in").isHidden()).toBe(true);
    expect(errors).toEqual([]);
    await context.close();
  });
});

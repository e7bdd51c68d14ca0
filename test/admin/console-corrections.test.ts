import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Browser } from "playwright-core";
import { join } from "node:path";
import { openContext, SCREENSHOTS } from "../support/chromium.ts";
import { startConsoleServer, type ConsoleServer } from "../support/console-server.ts";
import { type ServerProcess } from "../support/server-process.ts";

/**
 * The console's local corrections in a real browser (Debian's Chromium, driven by
 * playwright-core) against a real two-thread server: a correction set in the form is
 * listed, answered by the public API, refused with the API's reason when it is bad, and
 * removed. The screenshot goes to test/screenshots/ for review.
 */

let server: ServerProcess;
let admin: string;
let token: string;
let key: string;
let browser: Browser;
let setup: ConsoleServer | undefined;

beforeAll(async () => {
  setup = await startConsoleServer("console-corrections", ["--workers", "2"], (run) => {
    key = (JSON.parse(run(["keys", "create", "--name", "k", "--json"]).stdout) as { key: string }).key;
  });
  ({ server, admin, token, browser } = setup);
}, 120_000);

afterAll(() => setup?.close());

const lookup = async (ip: string) =>
  (await (
    await fetch(`${server.url}/v1/lookup`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ ip }) })
  ).json()) as Record<string, unknown>;

describe("the console's corrections", () => {
  test("list, add (answered by the API within a second), a refusal with its reason, remove", async () => {
    const context = await openContext(browser, { viewport: { width: 1280, height: 1400 } });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(`${admin}/console#token=${token}`);
    const rows = page.locator("#corrections tbody tr");
    await rows.first().waitFor();
    expect(await rows.first().textContent()).toContain("No corrections");

    await page.fill("#correction-cidr", "1.1.1.0/25");
    await page.fill("#correction-country", "de");
    await page.fill("#correction-city", "Berlin");
    await page.selectOption("#correction-hosting", "true");
    await page.fill("#correction-service", "Example Cloud");
    await page.fill("#correction-note", "moved in 2026");
    await page.click("#correction-form button[type=submit]");
    await page.locator('#corrections tr[data-cidr="1.1.1.0/25"]').waitFor();
    const row = await page.locator('#corrections tr[data-cidr="1.1.1.0/25"]').textContent();
    expect(row).toContain("country_code DE");
    expect(row).toContain("city Berlin");
    expect(row).toContain("privacy.hosting true");
    expect(row).toContain("moved in 2026");
    // Said under the form, where the action was.
    expect(await page.locator("#correction-form + p.note").textContent()).toContain("1.1.1.0/25 is corrected");
    // The form is cleared for the next one.
    expect(await page.inputValue("#correction-cidr")).toBe("");

    const start = performance.now();
    let answer = await lookup("1.1.1.1");
    while (answer.country_code !== "DE" && performance.now() - start < 1000) {
      await Bun.sleep(25);
      answer = await lookup("1.1.1.1");
    }
    expect(answer).toMatchObject({ network: "1.1.1.0/25", country_code: "DE", country: "Germany", city: "Berlin", privacy: { hosting: true, service: "Example Cloud" } });

    // A block with host bits set: the API's reason is shown, and nothing is added.
    await page.fill("#correction-cidr", "1.1.1.1/24");
    await page.fill("#correction-asn", "64500");
    await page.click("#correction-form button[type=submit]");
    await page.locator("#correction-form + p.note.note-error").waitFor();
    expect(await page.locator("#correction-form + p.note").textContent()).toContain("host bits set: the block of that prefix is 1.1.1.0/24 (invalid_request)");
    expect(await rows.count()).toBe(1);
    await page.screenshot({ path: join(SCREENSHOTS, "console-corrections.png"), fullPage: true });

    page.once("dialog", (dialog) => void dialog.accept());
    await page.click('#corrections tr[data-cidr="1.1.1.0/25"] button');
    await page.locator("#corrections tbody tr", { hasText: "No corrections" }).waitFor();
    expect(errors).toEqual([]);
    await context.close();
  });
});

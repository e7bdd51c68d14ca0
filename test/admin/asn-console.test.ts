import { afterAll, beforeAll, expect, test } from "bun:test";
import { type Browser } from "playwright-core";
import { join } from "node:path";
import { openContext, SCREENSHOTS } from "../support/chromium.ts";
import { startConsoleServer, type ConsoleServer } from "../support/console-server.ts";

/**
 * The console's lookup-by-AS box in a real browser (Debian's Chromium, as in
 * console.test.ts) against a real server: an AS number shows the AS and its prefixes, a
 * name lists matches whose buttons look them up, a refused number says why.
 */

let admin: string;
let token: string;
let browser: Browser;
let setup: ConsoleServer | undefined;

beforeAll(async () => {
  setup = await startConsoleServer("asn-console");
  ({ admin, token, browser } = setup);
}, 120_000);

afterAll(() => setup?.close());

test("looks an AS up by number, searches by name, and says why a number is refused", async () => {
  const context = await openContext(browser, { viewport: { width: 1280, height: 1000 } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(error.message));
  await page.goto(`${admin}/console#token=${token}`);
  await page.locator("#signed-in").waitFor({ state: "visible" });

  await page.fill("#asn-input", "as112");
  await page.click("#asn-form button[type=submit]");
  await page.locator("#asn-heading").waitFor();
  expect(await page.locator("#asn-heading").textContent()).toBe("AS112 DNS-OARC");
  expect(await page.locator("#asn-facts").textContent()).toBe("United States (US) · 512 IPv4 addresses · 2 IPv4 and 2 IPv6 prefixes · not a hosting provider");
  expect(await page.locator("#asn-prefixes4 li").allTextContents()).toEqual(["192.31.196.0/24", "192.175.48.0/24"]);
  expect(await page.locator("#asn-prefixes6 li").allTextContents()).toEqual(["2001:4:112::/48", "2620:4f:8000::/48"]);

  await page.fill("#asn-input", "wide project");
  await page.click("#asn-form button[type=submit]");
  await page.locator("#asn-results").waitFor();
  const row = page.locator("#asn-results tbody tr", { hasText: "AS2500" });
  expect(await row.locator("td").nth(2).textContent()).toBe("JP");
  await row.locator("button").click();
  await page.locator("#asn-heading", { hasText: "AS2500 WIDE Project" }).waitFor();
  expect(await page.locator("#asn-input").inputValue()).toBe("AS2500");
  expect(await page.locator("#asn-prefixes4 li").first().textContent()).toBe("133.4.128.0/18");
  await page.screenshot({ path: join(SCREENSHOTS, "console-asn.png"), fullPage: true });

  await page.fill("#asn-input", "AS64512");
  await page.click("#asn-form button[type=submit]");
  await page.locator("#asn-error").waitFor({ state: "visible" });
  expect(await page.locator("#asn-error").textContent()).toBe("AS64512 is not a public AS number (private-use)");
  expect(await page.locator("#asn-result").textContent()).toBe("");

  await page.fill("#asn-input", "AS4199999999");
  await page.click("#asn-form button[type=submit]");
  await page.locator("#asn-not-found").waitFor();
  expect(await page.locator("#asn-error").isHidden()).toBe(true);
  expect(errors).toEqual([]);
  await context.close();
}, 60_000);

import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions } from "playwright-core";

/** Where the browser tests write their screenshots for review (not kept in git). */
export const SCREENSHOTS = join(import.meta.dir, "..", "screenshots");

/**
 * Debian's Chromium, headless, driven by playwright-core (which brings no browser of its
 * own). The flags keep it from reaching out to the network, which this machine refuses.
 */
export function launchChromium(): Promise<Browser> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  return chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--headless"],
  });
}

/**
 * How long a page's waits (a locator's waitFor, a click's wait for its element) last
 * before they fail naming what they waited for: well inside a test's 30 s, so that a step
 * that never comes is named instead of the whole test timing out.
 */
const STEP_TIMEOUT_MS = 20_000;

/** A browser context whose pages' waits fail after STEP_TIMEOUT_MS. */
export async function openContext(browser: Browser, options?: BrowserContextOptions): Promise<BrowserContext> {
  const context = await browser.newContext(options);
  context.setDefaultTimeout(STEP_TIMEOUT_MS);
  return context;
}

import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser } from "playwright-core";

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

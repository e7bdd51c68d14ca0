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

  const api = (method: string, path: string, body?: unknown) =>
    fetch(`${admin}/admin/v1/corrections${path}`, { method, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  const correctionOf = async (cidr: string) => ((await (await api("GET", "")).json()) as { corrections: Record<string, unknown>[] }).corrections.find((c) => c.cidr === cidr);

  test("Edit fills the form with the correction, so that saving a new note keeps its other fields; a block typed in again asks before dropping fields", async () => {
    expect((await api("PUT", "/8.8.4.0_24", { country_code: "FR", city: "Paris", as_name: null, note: "old note" })).status).toBe(200);
    let note = "old note";
    for (const [width, height] of [[1280, 1400], [390, 1400]] as const) {
      const context = await openContext(browser, { viewport: { width, height } });
      const page = await context.newPage();
      const errors: string[] = [];
      page.on("pageerror", (error) => errors.push(error.message));
      await page.goto(`${admin}/console#token=${token}`);
      const row = page.locator('#corrections tr[data-cidr="8.8.4.0/24"]');
      await row.waitFor();
      await row.locator("button", { hasText: "Edit" }).click();
      expect(await page.inputValue("#correction-cidr")).toBe("8.8.4.0/24");
      expect(await page.inputValue("#correction-country")).toBe("FR");
      expect(await page.inputValue("#correction-city")).toBe("Paris");
      expect(await page.inputValue("#correction-note")).toBe(note);
      expect(await page.inputValue("#correction-as-name")).toBe("");
      expect(await page.locator("#correction-as-name").getAttribute("placeholder")).toBe("AS name: null");
      expect(await page.locator("#correction-editing").textContent()).toContain("Editing the correction of 8.8.4.0/24");
      await page.locator("#corrections-section").screenshot({ path: join(SCREENSHOTS, `console-corrections-edit-${width}.png`) });
      await page.fill("#correction-note", `new note ${width}`);
      await page.click("#correction-form button[type=submit]");
      await page.locator("#correction-form + p.note", { hasText: "8.8.4.0/24 is corrected" }).waitFor();
      const shown = await row.textContent();
      expect(shown).toContain("city Paris");
      expect(shown).toContain(`new note ${width}`);
      // The city stays, and so does the AS name the correction names as null.
      expect(await correctionOf("8.8.4.0/24")).toMatchObject({ country_code: "FR", city: "Paris", as_name: null, note: `new note ${width}` });
      // Back to a new block: the form is empty, the block can be typed again.
      expect(await page.inputValue("#correction-cidr")).toBe("");
      expect(await page.locator("#correction-cidr").getAttribute("readonly")).toBeNull();
      expect(await page.locator("#correction-editing").isHidden()).toBe(true);
      expect(errors).toEqual([]);
      note = `new note ${width}`;
      await context.close();
    }

    const context = await openContext(browser, { viewport: { width: 1280, height: 1400 } });
    const page = await context.newPage();
    await page.goto(`${admin}/console#token=${token}`);
    await page.locator('#corrections tr[data-cidr="8.8.4.0/24"]').waitFor();
    // The block typed in again with one field: the page asks, naming what would be dropped; declined, nothing is written.
    await page.fill("#correction-cidr", "8.8.4.0/24");
    await page.fill("#correction-country", "FR");
    const asked = new Promise<string>((resolve) => page.once("dialog", (dialog) => {
      resolve(dialog.message());
      void dialog.dismiss();
    }));
    await page.click("#correction-form button[type=submit]");
    const question = await asked;
    expect(question).toContain("replaces that correction whole");
    expect(question).toContain("city");
    expect(await correctionOf("8.8.4.0/24")).toMatchObject({ city: "Paris", note: "new note 390" });
    // Only a note for a corrected block: the page says to use Edit, and writes nothing.
    await page.fill("#correction-country", "");
    await page.fill("#correction-note", "just a note");
    await page.click("#correction-form button[type=submit]");
    await page.locator("#correction-form + p.note.note-error", { hasText: "press Edit on its row" }).waitFor();
    expect(await correctionOf("8.8.4.0/24")).toMatchObject({ city: "Paris", note: "new note 390" });
    await context.close();
    expect((await api("DELETE", "/8.8.4.0_24")).status).toBe(200);
  });

  test("a block typed in again in another spelling (leading zeros, capitals, a bare address) is the block listed: the page asks before dropping its fields", async () => {
    expect((await api("PUT", "/2001:db8::_32", { country_code: "DE", city: "Berlin" })).status).toBe(200);
    expect((await api("PUT", "/192.0.2.7_32", { country_code: "NL", city: "Amsterdam" })).status).toBe(200);
    const context = await openContext(browser, { viewport: { width: 1280, height: 1400 } });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(`${admin}/console#token=${token}`);
    await page.locator('#corrections tr[data-cidr="2001:db8::/32"]').waitFor();
    for (const [typed, listed, dropped] of [
      ["2001:0DB8::/32", "2001:db8::/32", "city"],
      ["2001:0db8:0000::/32", "2001:db8::/32", "city"],
      ["192.0.2.7", "192.0.2.7/32", "city"],
    ] as const) {
      await page.fill("#correction-cidr", typed);
      await page.fill("#correction-country", "FR");
      const asked = new Promise<string>((resolve) => page.once("dialog", (dialog) => {
        resolve(dialog.message());
        void dialog.dismiss();
      }));
      await page.click("#correction-form button[type=submit]");
      // Not asked, the page would have saved at once and said so under the form.
      const saved = page.locator("#correction-form + p.note", { hasText: "is corrected (" }).waitFor().then(
        async () => `saved: ${await page.locator("#correction-form + p.note").textContent()}`,
        () => "neither asked nor saved",
      );
      const question = await Promise.race([asked, saved]);
      expect({ typed, question }).toEqual({ typed, question: expect.stringContaining(`${listed} is corrected already`) });
      expect(question).toContain(`${dropped} would no longer be corrected`);
    }
    // Declined each time: nothing was written.
    expect(await correctionOf("2001:db8::/32")).toMatchObject({ country_code: "DE", city: "Berlin" });
    expect(await correctionOf("192.0.2.7/32")).toMatchObject({ country_code: "NL", city: "Amsterdam" });
    expect(errors).toEqual([]);
    await context.close();
    for (const path of ["/2001:db8::_32", "/192.0.2.7_32"]) expect((await api("DELETE", path)).status).toBe(200);
  });

  test("Remove's message is said where the row was", async () => {
    for (const cidr of ["9.9.9.0/24", "9.9.10.0/24"]) expect((await api("PUT", `/${cidr.replace("/", "_")}`, { country_code: "CH" })).status).toBe(200);
    const context = await openContext(browser, { viewport: { width: 1280, height: 1400 } });
    const page = await context.newPage();
    await page.goto(`${admin}/console#token=${token}`);
    await page.locator('#corrections tr[data-cidr="9.9.10.0/24"]').waitFor();
    page.once("dialog", (dialog) => void dialog.accept());
    await page.locator('#corrections tr[data-cidr="9.9.10.0/24"]').locator("button", { hasText: "Remove" }).click();
    await page.locator('#corrections tr[data-cidr="9.9.9.0/24"] + tr.note-row', { hasText: "The correction of 9.9.10.0/24 is removed" }).waitFor();
    expect(await page.locator("#correction-form + p.note").count()).toBe(0);
    // The first row: said above the list, where it was.
    page.once("dialog", (dialog) => void dialog.accept());
    await page.locator('#corrections tr[data-cidr="9.9.9.0/24"]').locator("button", { hasText: "Remove" }).click();
    await page.locator("#correction-form + p.note", { hasText: "The correction of 9.9.9.0/24 is removed" }).waitFor();
    await context.close();
  });
});

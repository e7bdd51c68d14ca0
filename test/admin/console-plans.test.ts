import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Browser, type Page } from "playwright-core";
import { join } from "node:path";
import { SCREENSHOTS } from "../support/chromium.ts";
import { openSignedIn, startConsoleServer, type ConsoleServer } from "../support/console-server.ts";
import { cli } from "../support/server-process.ts";

/**
 * A plan edited in the console while it is changed elsewhere (the CLI, on the same state),
 * in a real browser against a real server: the console's Save sends all three limits
 * (`PUT /admin/v1/plans/NAME`), so a limit the operator did not touch takes the plan's
 * value as it is when saving, not as the row was drawn; a limit changed in both places
 * is not saved, and the row says so.
 */

const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
let setup: ConsoleServer | undefined;
let browser: Browser;
let admin: string;
let token: string;
let state: string;

interface Plan {
  name: string;
  max_batch_size: number;
  monthly_units: number | null;
  rate_limit: number | null;
}
interface AuditEntry {
  actor: string;
  action: string;
  target: string;
  changes: Record<string, { from: unknown; to: unknown }>;
}

beforeAll(async () => {
  setup = await startConsoleServer("console-plans");
  ({ browser, admin, token, state } = setup);
}, 120_000);

afterAll(() => setup?.close());

const authorized = (path: string) => fetch(`${admin}${path}`, { headers: { authorization: `Bearer ${token}` } });
const planOf = async (name: string) => ((await (await authorized("/admin/v1/plans")).json()) as { plans: Plan[] }).plans.find((plan) => plan.name === name);
/** The plan's audit entries, newest first. */
const auditOf = async (name: string) => ((await (await authorized("/admin/v1/audit")).json()) as { entries: AuditEntry[] }).entries.filter((entry) => entry.target === `plan:${name}`);

/** `iplookup plans set NAME …` on the server's state, as another operator would, behind the console's back. */
async function setElsewhere(name: string, flags: string[], expected: Partial<Plan>): Promise<void> {
  const run = cli(["plans", "set", name, ...flags], { IPLOOKUP_STATE: state });
  expect(run.code).toBe(0);
  // Applied: the admin API answers it.
  expect(await planOf(name)).toMatchObject(expected);
}

/** Signed in, the plans drawn; `requests` lists each request to the admin API as `METHOD /path`. */
async function signedIn(viewport = DESKTOP): Promise<{ page: Page; errors: string[]; requests: string[]; close: () => Promise<void> }> {
  const opened = await openSignedIn(browser, admin, token, viewport);
  await opened.page.locator("#plans tr[data-plan='free']").waitFor();
  const requests: string[] = [];
  opened.page.on("request", (request) => {
    const url = new URL(request.url());
    if (url.pathname.startsWith("/admin/v1/")) requests.push(`${request.method()} ${url.pathname}`);
  });
  return { ...opened, requests };
}

const box = (page: Page, plan: string, label: string) => page.locator(`#plans tr[data-plan='${plan}'] input[aria-label='${label} of ${plan}']`);

describe("a plan saved in the console keeps what changed elsewhere since its row was drawn", () => {
  test("a limit changed with the CLI meanwhile, not in the row, keeps its new value; the audit names only the limit edited", async () => {
    const { page, errors, requests, close } = await signedIn();
    // The row as drawn: free as seeded.
    expect(await box(page, "free", "Max batch").inputValue()).toBe("100");
    expect(await box(page, "free", "Units a month").inputValue()).toBe("100000");
    expect(await box(page, "free", "Requests a second").inputValue()).toBe("10");
    await setElsewhere("free", ["--rate-limit", "50"], { rate_limit: 50 });
    // The console has not drawn the plans again: its row still shows 10.
    expect(await box(page, "free", "Requests a second").inputValue()).toBe("10");

    await box(page, "free", "Max batch").fill("200");
    await page.click("#plans tr[data-plan='free'] button");
    const note = page.locator("#plans tr[data-plan='free'] + tr.note-row");
    await note.waitFor();
    expect(await note.textContent()).toBe("Plan free saved: 200 a batch, 100,000 units a month, 50 requests a second.");
    expect(await planOf("free")).toEqual({ name: "free", max_batch_size: 200, monthly_units: 100_000, rate_limit: 50 });
    // The plan was read again just before it was saved.
    expect(requests.slice(0, 2)).toEqual(["GET /admin/v1/plans", "PUT /admin/v1/plans/free"]);
    // The CLI's change, then the console's: max batch alone, under the admin token.
    const [consoles, clis] = await auditOf("free");
    expect(clis).toMatchObject({ actor: "cli", action: "plan.updated", changes: { rate_limit: { from: 10, to: 50 } } });
    expect(consoles!.actor).toStartWith("adm_");
    expect(consoles!.action).toBe("plan.updated");
    expect(consoles!.changes).toEqual({ max_batch_size: { from: 100, to: 200 } });
    // The row is drawn again as saved.
    expect(await box(page, "free", "Requests a second").inputValue()).toBe("50");
    expect(errors).toEqual([]);
    await close();
  });

  test("a limit made unlimited with the CLI meanwhile stays unlimited when another is ticked unlimited in the row", async () => {
    const { page, errors, close } = await signedIn();
    await setElsewhere("standard", ["--monthly-units", "unlimited"], { monthly_units: null });
    await page.check("#plans tr[data-plan='standard'] input[aria-label='Requests a second of standard: unlimited']");
    await page.click("#plans tr[data-plan='standard'] button");
    await page.locator("#plans tr[data-plan='standard'] + tr.note-row", { hasText: "Plan standard saved" }).waitFor();
    expect(await planOf("standard")).toEqual({ name: "standard", max_batch_size: 1000, monthly_units: null, rate_limit: null });
    expect((await auditOf("standard"))[0]!.changes).toEqual({ rate_limit: { from: 100, to: null } });
    expect(errors).toEqual([]);
    await close();
  });

  for (const [width, viewport, name] of [["desktop", DESKTOP, "silver"], ["phone", PHONE, "bronze"]] as const) {
    test(`${width}: a limit changed both in the row and with the CLI meanwhile is not saved; the row says so with the plan's limits now, shows them, and saves again`, async () => {
      expect(cli(["plans", "set", name, "--max-batch", "100", "--monthly-units", "100000", "--rate-limit", "10"], { IPLOOKUP_STATE: state }).code).toBe(0);
      const { page, errors, requests, close } = await signedIn(viewport);
      await setElsewhere(name, ["--rate-limit", "50"], { rate_limit: 50 });
      const before = await auditOf(name);

      await box(page, name, "Requests a second").fill("20");
      await box(page, name, "Max batch").fill("300");
      await page.click(`#plans tr[data-plan='${name}'] button`);
      const note = page.locator(`#plans tr[data-plan='${name}'] + tr.note-row.note-error`);
      await note.waitFor();
      expect(await note.textContent()).toBe(
        `Plan ${name} was changed elsewhere since this row was drawn, so nothing was saved. Requests a second: this row showed 10, you typed 20, it is now 50. ` +
          "Its limits now: 100 a batch, 100,000 units a month, 50 requests a second. The row shows them, with your other changes kept: type what you want and save again.",
      );
      expect(await note.getAttribute("role")).toBe("alert");
      // Nothing was sent: the plan and its audit log are as the CLI left them.
      expect(requests.filter((request) => request.startsWith("PUT "))).toEqual([]);
      expect(await planOf(name)).toEqual({ name, max_batch_size: 100, monthly_units: 100_000, rate_limit: 50 });
      expect(await auditOf(name)).toEqual(before);
      // The row shows the rate as it is now, marked; the other change is kept.
      expect(await box(page, name, "Requests a second").inputValue()).toBe("50");
      expect(await box(page, name, "Requests a second").getAttribute("aria-invalid")).toBe("true");
      expect(await box(page, name, "Max batch").inputValue()).toBe("300");
      await note.scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(SCREENSHOTS, `console-plan-changed-meanwhile-${width}.png`) });

      // Saved again as it stands: the max batch typed, the rate as it is now.
      await page.click(`#plans tr[data-plan='${name}'] button`);
      await page.locator(`#plans tr[data-plan='${name}'] + tr.note-row.note-ok`, { hasText: `Plan ${name} saved` }).waitFor();
      expect(await planOf(name)).toEqual({ name, max_batch_size: 300, monthly_units: 100_000, rate_limit: 50 });
      expect((await auditOf(name))[0]!.changes).toEqual({ max_batch_size: { from: 100, to: 300 } });
      // The operator's own rate, typed again once they have seen the plan's, is saved.
      await box(page, name, "Requests a second").fill("20");
      await page.click(`#plans tr[data-plan='${name}'] button`);
      await page.locator(`#plans tr[data-plan='${name}'] + tr.note-row.note-ok`, { hasText: "20 requests a second" }).waitFor();
      expect(await planOf(name)).toEqual({ name, max_batch_size: 300, monthly_units: 100_000, rate_limit: 20 });
      expect(errors).toEqual([]);
      await close();
    });
  }
});

/**
 * The console's audit log (section #audit): every change made through the admin API,
 * the console or the CLI, newest first, for a span of UTC days (the last 30 by default),
 * from GET /admin/v1/audit. Every text is set as text.
 */
import type { AuditEntry } from "./api-types.ts";
import { byId, describeError, make, type ConsoleHooks } from "./console-hooks.ts";
import { labelCells } from "./dom.ts";

const DAY_MS = 86_400_000;
/** The most entries shown (the admin API's default); a span with more says so. */
const LIMIT = 1000;
let hooks: ConsoleHooks | null = null;
/** The span last filled in by the page (the last 30 UTC days), not chosen by the operator. */
let defaultSpan = { from: "", to: "" };

/** Wires the span's form; called once, when the page starts. */
export function initAuditPage(consoleHooks: ConsoleHooks): void {
  hooks = consoleHooks;
  followToday();
  byId("audit-form").addEventListener("submit", (event) => {
    event.preventDefault();
    void loadAudit();
  });
}

/**
 * Sets the span to the last 30 UTC days as of now, unless the operator chose another:
 * a page left open past midnight UTC still shows the changes made today.
 */
function followToday(): void {
  const fromInput = byId<HTMLInputElement>("audit-from");
  const toInput = byId<HTMLInputElement>("audit-to");
  if (fromInput.value !== defaultSpan.from || toInput.value !== defaultSpan.to) return;
  const today = new Date();
  defaultSpan = { from: new Date(today.getTime() - 29 * DAY_MS).toISOString().slice(0, 10), to: today.toISOString().slice(0, 10) };
  fromInput.value = defaultSpan.from;
  toInput.value = defaultSpan.to;
}

/** Loads and shows the entries of the chosen span; a refusal is shown in the section, the rows of another span taken away. */
export async function loadAudit(): Promise<void> {
  if (!hooks) return;
  followToday();
  const from = byId<HTMLInputElement>("audit-from").value;
  const to = byId<HTMLInputElement>("audit-to").value;
  const error = byId("audit-error");
  try {
    const query = new URLSearchParams();
    if (from) query.set("from", from);
    if (to) query.set("to", to);
    // One more than is shown: an answer of LIMIT + 1 entries is how the page knows there are more.
    query.set("limit", String(LIMIT + 1));
    const { entries } = await hooks.api<{ entries: AuditEntry[] }>("GET", `/admin/v1/audit?${query}`);
    error.hidden = true;
    render(entries.slice(0, LIMIT), entries.length > LIMIT);
  } catch (failure) {
    if ((failure as { problem?: { status: number } }).problem?.status === 401) return;
    error.textContent = describeError(failure);
    error.hidden = false;
    byId("audit-entries").querySelector("tbody")!.replaceChildren();
    byId("audit-count").textContent = "";
  }
}

function render(entries: readonly AuditEntry[], more: boolean): void {
  const rows = entries.map((entry) => {
    const row = make("tr", undefined, { "data-action": entry.action });
    const changes = make("td", undefined, { class: "audit-changes" });
    for (const line of describeChanges(entry)) changes.append(make("div", line));
    row.append(
      make("td", `${entry.at.slice(0, 10)} ${entry.at.slice(11, 19)}`, { class: "mono nowrap", title: entry.at }),
      make("td", entry.actor, { class: "mono" }),
      make("td", entry.action, { class: "mono" }),
      make("td", entry.target, { class: "mono" }),
      changes,
    );
    return row;
  });
  if (rows.length === 0) {
    const empty = make("tr");
    empty.append(make("td", "No changes in these days.", { colspan: "5", class: "muted" }));
    rows.push(empty);
  }
  byId("audit-entries").querySelector("tbody")!.replaceChildren(...rows);
  labelCells();
  byId("audit-count").textContent =
    more ? `the newest ${LIMIT.toLocaleString("en-US")} changes; there are more: choose fewer days` : entries.length === 1 ? "1 change" : `${entries.length} changes`;
}

/** A plan's limits, where none means "unlimited". */
const PLAN_LIMITS = new Set(["monthly_units", "rate_limit"]);

/** `plan: free → standard`, one line a field; a creation's fields as `name: value`. */
function describeChanges(entry: AuditEntry): string[] {
  const created = entry.action.endsWith(".created");
  return Object.entries(entry.changes).map(([field, change]) => {
    const none = entry.action.startsWith("plan.") && PLAN_LIMITS.has(field) ? "unlimited" : "none";
    const { from, to } = (change ?? {}) as { from?: unknown; to?: unknown };
    if (from === undefined && to === undefined) return `${field}: ${text(change, none)}`;
    if (created && from === null) return `${field}: ${text(to, none)}`;
    return `${field}: ${text(from, none)} → ${text(to, none)}`;
  });
}

function text(value: unknown, none = "none"): string {
  if (value === null || value === undefined) return none;
  if (typeof value === "string") return value;
  if (Array.isArray(value)) return value.map((item) => text(item)).join(", ") || none;
  return JSON.stringify(value);
}

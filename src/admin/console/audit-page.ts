/**
 * The console's audit log (section #audit): every change made through the admin API,
 * the console or the CLI, newest first, for a span of UTC days (the last 30 by default),
 * from GET /admin/v1/audit. Every text is set as text.
 */
import type { AuditEntry } from "./api-types.ts";
import { byId, describeError, make, type ConsoleHooks } from "./console-hooks.ts";

const DAY_MS = 86_400_000;
let hooks: ConsoleHooks | null = null;

/** Wires the span's form; called once, when the page starts. */
export function initAuditPage(consoleHooks: ConsoleHooks): void {
  hooks = consoleHooks;
  const today = new Date();
  byId<HTMLInputElement>("audit-to").value = today.toISOString().slice(0, 10);
  byId<HTMLInputElement>("audit-from").value = new Date(today.getTime() - 29 * DAY_MS).toISOString().slice(0, 10);
  byId("audit-form").addEventListener("submit", (event) => {
    event.preventDefault();
    void loadAudit();
  });
}

/** Loads and shows the entries of the chosen span; a refusal is shown in the section. */
export async function loadAudit(): Promise<void> {
  if (!hooks) return;
  const from = byId<HTMLInputElement>("audit-from").value;
  const to = byId<HTMLInputElement>("audit-to").value;
  const error = byId("audit-error");
  try {
    const query = new URLSearchParams();
    if (from) query.set("from", from);
    if (to) query.set("to", to);
    const { entries } = await hooks.api<{ entries: AuditEntry[] }>("GET", `/admin/v1/audit?${query}`);
    error.hidden = true;
    render(entries);
  } catch (failure) {
    if ((failure as { problem?: { status: number } }).problem?.status === 401) return;
    error.textContent = describeError(failure);
    error.hidden = false;
  }
}

function render(entries: readonly AuditEntry[]): void {
  const rows = entries.map((entry) => {
    const row = make("tr", undefined, { "data-action": entry.action });
    const changes = make("td", undefined, { class: "audit-changes" });
    for (const line of describeChanges(entry.changes)) changes.append(make("div", line));
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
  byId("audit-count").textContent = entries.length === 1 ? "1 change" : `${entries.length} changes`;
}

/** `plan: free → standard`, one line a field. */
function describeChanges(changes: Readonly<Record<string, unknown>>): string[] {
  return Object.entries(changes).map(([field, change]) => {
    const { from, to } = (change ?? {}) as { from?: unknown; to?: unknown };
    if (from === undefined && to === undefined) return `${field}: ${text(change)}`;
    return `${field}: ${text(from)} → ${text(to)}`;
  });
}

function text(value: unknown): string {
  if (value === null || value === undefined) return "none";
  if (typeof value === "string") return value;
  if (Array.isArray(value)) return value.map(text).join(", ") || "none";
  return JSON.stringify(value);
}

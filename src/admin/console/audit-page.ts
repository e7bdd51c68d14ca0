/**
 * The console's audit log (section #audit): every change made through the admin API,
 * the console or the CLI, newest first, for a span of UTC days (the last 30 by default),
 * from GET /admin/v1/audit, a page of LIMIT entries at a time: "Older entries" asks for
 * the entries after the last one shown (the answer's `next`), "Newer entries" goes back.
 * Every text is set as text.
 */
import type { AuditEntry } from "./api-types.ts";
import { byId, describeError, make, type ConsoleHooks } from "./console-hooks.ts";
import { jsonParts, labelCells, named } from "./dom.ts";

const DAY_MS = 86_400_000;
/** The entries a page shows (the admin API's default). */
const LIMIT = 1000;
let hooks: ConsoleHooks | null = null;
/** The span last filled in by the page (the last 30 UTC days), not chosen by the operator. */
let defaultSpan = { from: "", to: "" };
/**
 * The pages before the one shown, newest first: the cursor each was asked with (null for
 * the newest) and how many entries it held. Empty: the newest page is shown. A cursor
 * stays valid while changes are made (they are newer than any page), so a reload after
 * a change shows the same page.
 */
let earlier: { before: string | null; count: number }[] = [];
/** The cursor of the page shown (null: the newest), and of the page after it (null: none). */
let shownBefore: string | null = null;
let nextBefore: string | null = null;
/** The span whose pages `earlier` holds: another span starts again at its newest. */
let pagedSpan = "";
/**
 * The number of the latest page asked for: an answer to an earlier request (a page asked
 * for before another span, another page or a reload was) is dropped, so the page shown is
 * always the one last asked for, with the count of the pages before it.
 */
let latestRequest = 0;
/**
 * Whether a page asked for has not come yet. Older and Newer entries do nothing meanwhile:
 * each turns from the page shown, whose `next` a second click would ask for again and count
 * twice (a quick double click showed entries 1,001–2,000 as "changes 2,001–3,000").
 */
let loading = false;

/** Wires the span's form and the page buttons; called once, when the page starts. */
export function initAuditPage(consoleHooks: ConsoleHooks): void {
  hooks = consoleHooks;
  followToday();
  byId("audit-form").addEventListener("submit", (event) => {
    event.preventDefault();
    firstPage();
    void loadAudit();
  });
  byId("audit-older").addEventListener("click", () => {
    if (loading || nextBefore === null) return;
    earlier.push({ before: shownBefore, count: shownCount() });
    shownBefore = nextBefore;
    void loadAudit().then(() => byId("audit").scrollIntoView({ block: "start" }));
  });
  byId("audit-newer").addEventListener("click", () => {
    if (loading) return;
    const previous = earlier.pop();
    if (!previous) return;
    shownBefore = previous.before;
    void loadAudit().then(() => byId("audit").scrollIntoView({ block: "start" }));
  });
}

function firstPage(): void {
  earlier = [];
  shownBefore = null;
  nextBefore = null;
}

function shownCount(): number {
  return byId("audit-entries").querySelectorAll("tbody tr[data-action]").length;
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

/**
 * Loads and shows the page of the chosen span the operator is on (its newest, unless they
 * went to older entries); a refusal is shown in the section, the rows of another span
 * taken away.
 */
export async function loadAudit(): Promise<void> {
  if (!hooks) return;
  followToday();
  const from = byId<HTMLInputElement>("audit-from").value;
  const to = byId<HTMLInputElement>("audit-to").value;
  if (`${from}/${to}` !== pagedSpan) firstPage();
  pagedSpan = `${from}/${to}`;
  const error = byId("audit-error");
  const request = ++latestRequest;
  setLoading(true);
  try {
    const query = new URLSearchParams();
    if (from) query.set("from", from);
    if (to) query.set("to", to);
    query.set("limit", String(LIMIT));
    if (shownBefore !== null) query.set("before", shownBefore);
    const { entries, next } = await hooks.api<{ entries: AuditEntry[]; next: string | null }>("GET", `/admin/v1/audit?${query}`);
    if (request !== latestRequest) return;
    error.hidden = true;
    nextBefore = next;
    render(entries);
  } catch (failure) {
    if (request !== latestRequest) return;
    if ((failure as { problem?: { status: number } }).problem?.status === 401) return;
    error.textContent = describeError(failure);
    error.hidden = false;
    forgetAudit();
  } finally {
    if (request === latestRequest) setLoading(false);
  }
}

/** Marks the page buttons as waiting (aria-disabled, not disabled, so that the one pressed keeps the focus). */
function setLoading(on: boolean): void {
  loading = on;
  for (const id of ["audit-older", "audit-newer"]) {
    if (on) byId(id).setAttribute("aria-disabled", "true");
    else byId(id).removeAttribute("aria-disabled");
  }
}

/** The span back to the last 30 days, as a page just opened has it (a sign-out: the span chosen was the session's). */
export function resetAuditSpan(): void {
  byId<HTMLInputElement>("audit-from").value = "";
  byId<HTMLInputElement>("audit-to").value = "";
  defaultSpan = { from: "", to: "" };
  followToday();
}

/** Takes every entry off the page, back to the newest page (a refused span, a sign-out); a page still to come is dropped. */
export function forgetAudit(): void {
  latestRequest++;
  setLoading(false);
  firstPage();
  pagedSpan = "";
  byId("audit-entries").querySelector("tbody")!.replaceChildren();
  byId("audit-count").textContent = "";
  byId("audit-pages").hidden = true;
}

function render(entries: readonly AuditEntry[]): void {
  const rows = entries.map((entry) => {
    const row = make("tr", undefined, { "data-action": entry.action });
    const changes = make("td", undefined, { class: "audit-changes" });
    for (const parts of describeChanges(entry)) {
      const line = make("div");
      line.append(...parts);
      changes.append(line);
    }
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
  const more = nextBefore !== null;
  const number = (count: number) => count.toLocaleString("en-US");
  const skipped = earlier.reduce((sum, page) => sum + page.count, 0);
  byId("audit-count").textContent =
    earlier.length === 0
      ? more
        ? `the newest ${number(entries.length)} changes; there are more: Older entries, under the list`
        : entries.length === 1
          ? "1 change"
          : `${entries.length} changes`
      : entries.length === 0
        ? `no changes older than the ${number(skipped)} newest`
        : `changes ${number(skipped + 1)}–${number(skipped + entries.length)}, newest first; ${more ? "there are more" : "the oldest of these days"}`;
  byId("audit-pages").hidden = !more && earlier.length === 0;
  byId("audit-older").hidden = !more;
  byId("audit-newer").hidden = earlier.length === 0;
}

/** A plan's limits, where none means "unlimited". */
const PLAN_LIMITS = new Set(["monthly_units", "rate_limit"]);

/**
 * `plan: free → standard`, one line a field; a creation's fields as `name: value`. Each
 * value is isolated (see shown): a right-to-left override in one (U+202E with no closing
 * character) would otherwise turn around the rest of its line, `→` and the other value.
 */
function describeChanges(entry: AuditEntry): (string | Node)[][] {
  const created = entry.action.endsWith(".created");
  return Object.entries(entry.changes).map(([field, change]) => {
    const none = entry.action.startsWith("plan.") && PLAN_LIMITS.has(field) ? "unlimited" : "none";
    const { from, to } = (change ?? {}) as { from?: unknown; to?: unknown };
    if (from === undefined && to === undefined) return [`${field}: `, ...shown(change, none)];
    if (created && from === null) return [`${field}: `, ...shown(to, none)];
    return [`${field}: `, ...shown(from, none), " → ", ...shown(to, none)];
  });
}

/**
 * A value as its line shows it: `none` for none, a list's items joined by ", ", an object
 * as its JSON; every text in it (a name, a note, a metadata member's name or value) in a
 * <bdi> of its own, which keeps a bidirectional override inside it. Numbers and the
 * words of the page are plain text.
 */
function shown(value: unknown, none = "none"): (string | Node)[] {
  if (value === null || value === undefined) return [none];
  if (typeof value === "string") return [named(value)];
  if (Array.isArray(value)) return value.length === 0 ? [none] : value.flatMap((item, at) => [...(at === 0 ? [] : [", "]), ...shown(item)]);
  return jsonParts(value, named);
}

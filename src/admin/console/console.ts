/**
 * The operator console: one page over the admin API (CONTRACT §10), bundled for the
 * browser with uPlot by iplookup itself (see console-build.ts) and served from the admin
 * listener. It loads nothing from elsewhere.
 *
 * The admin token comes from the page's fragment (`/console#token=…`, which a browser
 * never sends) or the sign-in form. It is kept in sessionStorage, so a reload stays
 * signed in and closing the tab forgets it, and the fragment is taken out of the address
 * bar and history at once. Every text shown is set as text, never parsed as HTML.
 */
import uPlot from "uplot";
import { correctionsSection } from "./corrections.ts";
import { forgetAudit, initAuditPage, loadAudit, resetAuditSpan } from "./audit-page.ts";
import type { ConsoleHooks } from "./console-hooks.ts";
import { askGrace, closeEditor, decorateKeyRow, initKeyControls } from "./key-controls-panel.ts";
import { applyTokenAccess } from "./token-access.ts";
import { startAsnLookup } from "./asn-lookup.ts";
import { startWebhooks, type ConsoleKit } from "./webhooks.ts";
import { dataSetTime, firstShownDay, isStale as isStaleAt, PLAN_LIMIT_NAMES, planSave, STALE_AFTER_DAYS, WHOLE_STEPS, type PlanLimit, type PlanLimits } from "./rules.ts";
import { byId as element, isolate, labelCells, make, named, type Message } from "./dom.ts";
import type { IssuedKey, Key, Plan, Status, Usage } from "./api-types.ts";

interface Problem {
  readonly status: number;
  readonly code: string;
  readonly detail: string;
}
const TOKEN_STORAGE = "iplookup-admin-token";
const TOP_KEYS = 10;

/** A refusal of the admin API, with its problem details. */
class ApiFailure extends Error {
  constructor(readonly problem: Problem) {
    super(problem.detail);
  }
}

let token: string | null = null;
let keys: Key[] = [];
let plans: Plan[] = [];
let chart: uPlot | null = null;
let corrections: { load(): Promise<void>; forget(): void } | null = null;
/** The Webhooks page (webhooks.ts), given what it needs from here. */
const kit: ConsoleKit = { api, make, say, attempt: (action, place) => attempt(action, place), placeNote: () => placeNote(), formatTime, ago, loadAudit };
const webhooks = startWebhooks(kit);

async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { authorization: `Bearer ${token ?? ""}` };
  if (body !== undefined) headers["content-type"] = "application/json";
  let response: Response;
  try {
    response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: "no-store" });
  } catch {
    // The browser says only "Failed to fetch": the server is down, restarting or out of reach.
    throw new ApiFailure({
      status: 0,
      code: "unreachable",
      detail: `The admin API did not answer ${method} ${path.split("?")[0]}: the server may be down or restarting. Try again when it is back; what this page shows may be out of date`,
    });
  }
  const text = await response.text();
  let data: unknown = null;
  try {
    data = text === "" ? null : JSON.parse(text);
  } catch {
    // Not JSON: an answer of something in between (a reverse proxy's HTML page for a 502),
    // not of iplookup, whose every answer and refusal is JSON.
    const failure = new ApiFailure({
      status: response.status,
      code: "bad_answer",
      detail: `The admin API did not answer ${method} ${path.split("?")[0]} properly (HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ""}, not JSON): something between this page and iplookup, such as a proxy, may have answered instead. Try again; what this page shows may be out of date`,
    });
    if (response.status === 401) showSignIn(`The admin token was refused (HTTP 401): sign in with an active one.`);
    throw failure;
  }
  if (!response.ok) {
    const problem = (data ?? { status: response.status, code: "error", detail: response.statusText }) as Problem;
    if (response.status === 401) showSignIn(`The admin token was refused (${problem.code}): sign in with an active one.`);
    throw new ApiFailure(problem);
  }
  return data as T;
}

// ---- formatting -------------------------------------------------------------------

const numbers = new Intl.NumberFormat("en-US");
/** `1.2M`, `350K`: the chart's axis, where full numbers would not fit. */
const compact = new Intl.NumberFormat("en-US", { notation: "compact", maximumFractionDigits: 1 });
const relative = new Intl.RelativeTimeFormat("en", { numeric: "auto" });

function formatCount(value: number | null): string {
  return value === null ? "unlimited" : numbers.format(value);
}

/** `2026-11-23 14:05 UTC`. */
function formatTime(iso: string | null): string {
  if (iso === null) return "never";
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

/** `3 days ago`, `in 2 hours`; within a minute, `just now` before now and `in 30 s` after it (a retry about to be made). */
function ago(iso: string): string {
  const seconds = (Date.parse(iso) - Date.now()) / 1000;
  const units: [Intl.RelativeTimeFormatUnit, number][] = [["year", 31_536_000], ["month", 2_592_000], ["day", 86_400], ["hour", 3600], ["minute", 60]];
  for (const [unit, size] of units) if (Math.abs(seconds) >= size) return relative.format(Math.round(seconds / size), unit);
  return seconds >= 1 ? `in ${Math.round(seconds)} s` : "just now";
}

function formatDuration(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`;
  return `${Math.floor(seconds / 86_400)} d ${Math.floor((seconds % 86_400) / 3600)} h`;
}

// ---- messages -----------------------------------------------------------------------

/**
 * The latest message, and where it belongs: `place` names the element of the action
 * (`data-place`: a key's or a plan's row, a form), so the message shows beside it, not in
 * a banner the operator may have scrolled away from. A row drawn again keeps it.
 */
let note: { place: string; text: Message; isError: boolean } | null = null;

function say(text: Message, isError = false, place = "top"): void {
  note = { place, text, isError };
  placeNote(true);
}

function unsay(place: string): void {
  if (note?.place !== place) return;
  note = null;
  placeNote();
}

/** Shows the latest message beside its place (again, after a table was drawn anew). */
function placeNote(scroll = false): void {
  labelCells();
  for (const old of document.querySelectorAll(".note")) old.remove();
  const banner = element("message");
  banner.hidden = true;
  if (!note) return;
  const anchor = note.place === "top" ? null : document.querySelector<HTMLElement>(`[data-place="${CSS.escape(note.place)}"]`);
  const attributes = { class: `note ${note.isError ? "note-error" : "note-ok"}`, role: note.isError ? "alert" : "status" };
  const parts = typeof note.text === "string" ? [note.text] : note.text;
  let shown: HTMLElement;
  if (!anchor) {
    banner.replaceChildren(...parts);
    banner.classList.toggle("error-message", note.isError);
    banner.hidden = false;
    shown = banner;
  } else if (anchor instanceof HTMLTableRowElement) {
    shown = make("tr", undefined, { ...attributes, class: `${attributes.class} note-row` });
    const cell = make("td", undefined, { colspan: String(anchor.cells.length) });
    cell.append(...parts);
    shown.append(cell);
    anchor.after(shown);
  } else {
    shown = make("p", undefined, attributes);
    shown.append(...parts);
    anchor.after(shown);
  }
  if (!scroll) return;
  // Brought to the middle of the screen when it is not wholly in view, so that a row
  // drawn again a moment later (a refresh the page started elsewhere) still shows it.
  const box = shown.getBoundingClientRect();
  if (box.top < 0 || box.bottom > innerHeight) shown.scrollIntoView({ block: "center" });
}

/** A refusal of one field: the message names it, and the field is marked. */
class FieldError extends Error {
  constructor(
    message: string,
    readonly field: HTMLElement,
  ) {
    super(message);
  }
}

/**
 * Runs an action, saying what went wrong (a refusal's detail) beside `place` instead of
 * throwing. Focus that the action's redraw took away (the control pressed is replaced by
 * its row drawn anew, and the browser puts focus on <body>) goes back to the same control
 * of the same row (see focusAgain), so that a keyboard user goes on from where they were.
 */
async function attempt(action: () => Promise<void>, place = "top"): Promise<void> {
  for (const marked of document.querySelectorAll("[aria-invalid=true]")) marked.removeAttribute("aria-invalid");
  const focused = focusPath();
  try {
    await action();
  } catch (error) {
    if (error instanceof ApiFailure && error.problem.status === 401) return;
    if (error instanceof FieldError) error.field.setAttribute("aria-invalid", "true");
    say(error instanceof ApiFailure ? `${error.problem.detail} (${error.problem.code})` : error instanceof Error ? error.message : String(error), true, place);
  } finally {
    focusAgain(focused);
  }
}

/** Where focus is: the row (its data-place) and the control in it, as found again in the row drawn anew. */
interface FocusPath {
  readonly place: string;
  /** The control's aria-label, else its text (a button's); null when it has neither. */
  readonly name: string | null;
  /** Its index among the row's controls. */
  readonly index: number;
}
const CONTROLS = "button, select, input, textarea";

function focusPath(): FocusPath | null {
  const focused = document.activeElement;
  if (!(focused instanceof HTMLElement) || !focused.matches(CONTROLS)) return null;
  const row = focused.closest<HTMLElement>("tr[data-place]");
  if (!row) return null;
  return { place: row.dataset.place!, name: focused.getAttribute("aria-label") ?? focused.textContent, index: [...row.querySelectorAll(CONTROLS)].indexOf(focused) };
}

/**
 * Focus back on the row's control after a redraw, when the action left it nowhere (on
 * <body>, or on the control taken out of the page): the control of the same name, else
 * the one in the same place, else the row's first control still usable, else the row
 * itself (a revoked key's row has none).
 */
function focusAgain(path: FocusPath | null): void {
  if (path === null) return;
  const now = document.activeElement;
  if (now !== null && now !== document.body && now.isConnected) return;
  const row = document.querySelector<HTMLElement>(`tr[data-place="${CSS.escape(path.place)}"]`);
  if (!row) return;
  const controls = [...row.querySelectorAll<HTMLElement>(CONTROLS)].filter((control) => !(control as HTMLButtonElement).disabled);
  const target =
    controls.find((control) => path.name !== null && (control.getAttribute("aria-label") ?? control.textContent) === path.name) ?? controls[path.index] ?? controls[0];
  if (target) target.focus({ preventScroll: true });
  else {
    row.tabIndex = -1;
    row.focus({ preventScroll: true });
  }
}

// ---- signing in -----------------------------------------------------------------------

/**
 * Shows the sign-in form and forgets everything of the session: the token, and what the
 * page showed with it (see forgetSession), so that whoever signs in next on this tab
 * sees none of it.
 */
function showSignIn(reason?: string): void {
  token = null;
  sessionStorage.removeItem(TOKEN_STORAGE);
  forgetSession();
  element("signed-in").hidden = true;
  element("sign-out").hidden = true;
  element("stale-data").hidden = true;
  element("server-info").textContent = "";
  element("sign-in").hidden = false;
  const error = element("sign-in-error");
  error.hidden = reason === undefined;
  error.textContent = reason ?? "";
  element<HTMLInputElement>("token-input").focus();
}

/**
 * Forgets what the page showed of a session, whether it ends by signing out or by
 * signing in with another token (`#token=…` in a tab already signed in): the secrets
 * still on the page (a key's or a webhook's, shown once), the open editors, the messages,
 * what was read with the token (keys, plans, use, corrections, webhooks and their
 * deliveries, the audit log, the data set), which the next token may not be allowed to
 * see and would otherwise stay in the page until it is drawn again, and what was typed
 * into the page's forms (a correction being edited, a webhook's URL, a new key's name,
 * an AS looked up, the audit log's span), which is the session's too.
 */
function forgetSession(): void {
  note = null;
  dismissSecret(false);
  webhooks.forget();
  closeEditor(false);
  corrections?.forget();
  // Back to the values the page was loaded with (the key editor's too: its fields are
  // filled when it opens, and keep what was typed until then).
  for (const form of ["create-key-form", "key-editor-form", "add-webhook-form", "asn-form", "audit-form"]) element<HTMLFormElement>(form).reset();
  element("new-key-plan").replaceChildren();
  resetAuditSpan();
  for (const old of document.querySelectorAll(".note")) old.remove();
  element("message").hidden = true;
  keys = [];
  plans = [];
  chart?.destroy();
  chart = null;
  for (const table of ["keys", "plans", "top-keys", "corrections", "webhooks", "deliveries", "sources"]) element(table).querySelector("tbody")!.replaceChildren();
  for (const text of ["usage-summary", "usage-legend", "data-summary", "deliveries-title", "asn-result"]) element(text).replaceChildren();
  element("asn-error").hidden = true;
  element<HTMLSelectElement>("usage-key").replaceChildren(make("option", "All keys", { value: "" }));
  forgetAudit();
}

async function signIn(candidate: string): Promise<void> {
  // Another token in a tab signed in already: nothing of the session before it stays.
  if (token !== null) forgetSession();
  token = candidate.trim();
  try {
    const status = await api<Status>("GET", "/admin/v1/status");
    sessionStorage.setItem(TOKEN_STORAGE, token);
    element("sign-in").hidden = true;
    element("signed-in").hidden = false;
    element("sign-out").hidden = false;
    renderStatus(status);
    await applyTokenAccess({ api });
    await refresh();
  } catch (error) {
    if (!(error instanceof ApiFailure && error.problem.status === 401)) showSignIn(`Cannot reach the admin API: ${String(error)}`);
  }
}

/** The token of `#token=…`, taken out of the address bar and history before anything else. */
function tokenFromFragment(): string | null {
  const fragment = new URLSearchParams(location.hash.replace(/^#/, ""));
  const found = fragment.get("token");
  if (location.hash !== "") history.replaceState(null, "", location.pathname + location.search);
  return found !== null && found.trim() !== "" ? found.trim() : null;
}

// ---- loading and rendering ----------------------------------------------------------

/** How many refreshes were asked for: one overtaken by a later one draws nothing (see refresh). */
let refreshAsked = 0;

async function refresh(): Promise<void> {
  const asked = ++refreshAsked;
  const [keyList, planList, status] = await Promise.all([
    api<{ keys: Key[] }>("GET", "/admin/v1/keys"),
    api<{ plans: Plan[] }>("GET", "/admin/v1/plans"),
    api<Status>("GET", "/admin/v1/status"),
  ]);
  // Overtaken (the sign-in's refresh still under way when an action's asked again): its
  // answers may be older than the later one's, and drawn after them they would take away
  // a key just created, and the note beside it.
  if (asked !== refreshAsked) return;
  keys = keyList.keys;
  plans = planList.plans;
  // The header's uptime and the data set's age as of now (a data update may have come in).
  renderStatus(status);
  renderKeys();
  renderPlans();
  renderUsageKeyChoice();
  await Promise.all([loadUsage(), corrections?.load(), loadAudit(), webhooks.refresh()]);
  placeNote();
}

function renderStatus(status: Status): void {
  element("server-info").textContent = `version ${status.version} · up ${formatDuration(status.uptime_seconds)} · ${status.workers} worker${status.workers === 1 ? "" : "s"}`;
  const data = status.data;
  const summary = element("data-summary");
  summary.replaceChildren(
    "Version ",
    make("code", data.data_version),
    `, built ${formatTime(data.built_at)} (${ago(data.built_at)}).`,
  );
  // Its age is that of its newest source of network data (see dataSetTime).
  const newest = dataSetTime(data.sources, data.built_at);
  const stale = isStale(newest);
  element("data-card").classList.toggle("stale", stale);
  element("stale-data").hidden = !stale;
  if (stale) {
    const warning = make("p", undefined, { class: "stale-warning", role: "alert", id: "stale-warning" });
    warning.append(
      make("strong", "Stale data. "),
      `The newest source is from ${newest.slice(0, 10)} (${ago(newest)}), older than ${STALE_AFTER_DAYS} days: answers may be out of date. Update it with `,
      make("code", "iplookup data update"),
      " (or serve with ",
      make("code", "--update-every 24h"),
      ").",
    );
    summary.append(warning);
  }
  const rows = data.sources.map((source) => {
    const row = make("tr");
    const name = make("td");
    name.append(make("strong", source.name), make("br"), make("span", source.origin, { class: "muted" }));
    const attribution = make("td", source.attribution);
    if (/^https?:\/\//.test(source.url)) attribution.append(" ", make("a", source.url, { href: source.url, rel: "noreferrer noopener", target: "_blank" }));
    const built = make("td", source.built_at ? `${source.built_at.slice(0, 10)} (${ago(source.built_at)})` : "not stated");
    if (source.built_at && isStale(source.built_at)) built.append(" ", make("span", "stale", { class: "badge stale-badge" }));
    row.append(name, make("td", source.version), built, make("td", source.license), attribution);
    return row;
  });
  element("sources").querySelector("tbody")!.replaceChildren(...rows);
  labelCells();
}

function isStale(iso: string): boolean {
  return isStaleAt(iso, Date.now());
}

function planOptions(select: HTMLSelectElement, chosen: string): void {
  select.replaceChildren(...plans.map((plan) => make("option", plan.name, plan.name === chosen ? { value: plan.name, selected: "" } : { value: plan.name })));
  select.value = chosen;
}

function renderKeys(): void {
  const newPlan = element<HTMLSelectElement>("new-key-plan");
  planOptions(newPlan, plans.some((plan) => plan.name === newPlan.value) ? newPlan.value : plans.some((plan) => plan.name === "free") ? "free" : (plans[0]?.name ?? ""));
  const rows = keys.map((key) => {
    const row = make("tr", undefined, { "data-key-id": key.id, "data-place": `key:${key.id}` });
    if (key.revoked_at) row.classList.add("revoked");
    const plan = make("select", undefined, { "aria-label": `Plan of ${key.name}`, class: "key-plan" });
    planOptions(plan, key.plan);
    plan.disabled = key.revoked_at !== null;
    // A plan change is asked for first, as a revocation is: in Chromium an arrow key on
    // the closed select changes its value (and fires change) at once, so that a key could
    // move to another plan by a stray key press while tabbing through the table.
    plan.addEventListener("change", () =>
      attempt(async () => {
        const chosen = plan.value;
        if (!confirm(`Move ${isolate(key.name)} (${key.id}) from plan ${key.plan} to plan ${chosen}? Its limits change within a second; its secret stays.`)) {
          plan.value = key.plan;
          return;
        }
        try {
          const moved = await api<Key>("PATCH", `/admin/v1/keys/${encodeURIComponent(key.id)}`, { plan: chosen });
          await refresh();
          say(["Key ", named(moved.name), ` is now on plan ${moved.plan}; its secret is unchanged.`], false, `key:${key.id}`);
        } catch (error) {
          // Refused or unanswered: the row shows the plan the key is on, not the one picked.
          plan.value = key.plan;
          throw error;
        }
      }, `key:${key.id}`),
    );
    const planCell = make("td");
    planCell.append(plan);
    const status = make("td", key.revoked_at ? `revoked ${key.revoked_at.slice(0, 10)}` : "active", { class: `phrase ${key.revoked_at ? "status-revoked" : "status-active"}` });
    const actions = make("td", undefined, { class: "actions" });
    if (!key.revoked_at) {
      const rotate = make("button", "Rotate", { type: "button", class: "quiet write" });
      rotate.addEventListener("click", () =>
        attempt(async () => {
          const grace = askGrace(key.name);
          if (grace === null) return;
          showSecret(await api<IssuedKey>("POST", `/admin/v1/keys/${encodeURIComponent(key.id)}/rotate`, grace === "" ? undefined : { grace }), "Rotated key");
          await refresh();
          say(["Key ", named(key.name), ` has a new secret (below, shown once); the old one stops working ${grace === "" ? "within a second" : `after ${grace}`}.`], false, `key:${key.id}`);
          focusSecret();
        }, `key:${key.id}`),
      );
      const revoke = make("button", "Revoke", { type: "button", class: "danger write" });
      revoke.addEventListener("click", () =>
        attempt(async () => {
          if (!confirm(`Revoke ${isolate(key.name)} (${key.id}) for good?`)) return;
          const revoked = await api<Key>("POST", `/admin/v1/keys/${encodeURIComponent(key.id)}/revoke`);
          // A secret still shown for it works no more.
          if (secretOf === key.id) dismissSecret(false);
          await refresh();
          say(["Key ", named(revoked.name), ` is revoked.`], false, `key:${key.id}`);
        }, `key:${key.id}`),
      );
      actions.append(rotate, revoke);
    }
    // A short phrase ("5 minutes ago") stays whole (see td.phrase in console.css).
    const last = make("td", key.last_used_at ? ago(key.last_used_at) : "never", key.last_used_at ? { class: "phrase", title: formatTime(key.last_used_at) } : { class: "phrase" });
    const nameCell = make("td", key.name);
    decorateKeyRow(key, nameCell, actions);
    row.append(nameCell, make("td", key.id, { class: "mono nowrap" }), planCell, make("td", key.created_at.slice(0, 10), { class: "nowrap" }), last, make("td", numbers.format(key.units_this_period), { class: "num" }), status, actions);
    return row;
  });
  if (rows.length === 0) {
    const empty = make("tr");
    empty.append(make("td", "No keys yet: create one above.", { colspan: "8", class: "muted" }));
    rows.push(empty);
  }
  element("keys").querySelector("tbody")!.replaceChildren(...rows);
  placeSecret();
  placeNote();
}

/**
 * Puts the secret shown under its key's row, or at the top of the keys when the row is
 * not drawn yet (the keys could not be read again after the key was made): a secret
 * shown once must reach the page whatever fails after it was issued.
 */
function placeSecret(): void {
  if (secretOf === null) return;
  const row = document.querySelector<HTMLTableRowElement>(`#keys tr[data-key-id="${CSS.escape(secretOf)}"]`);
  if (row) row.after(secretHolder);
  else element("keys").querySelector("tbody")!.prepend(secretHolder);
}

/**
 * The key whose new secret is shown, or null. The secret panel is shown under that key's
 * row (in `secretHolder`, which renderKeys places), beside the action that made it and
 * the message that answers it, however long the list of keys is.
 */
let secretOf: string | null = null;
const secretHolder = make("tr", undefined, { class: "secret-holder" });
/** The secret panel's parts, found once: the panel is out of the document while no key's row holds it. */
const secretParts = { panel: element("secret-panel"), title: element("secret-title"), value: element("secret-value"), copy: element("copy-secret") };

function showSecret(issued: IssuedKey, title: string): void {
  secretParts.title.replaceChildren(`${title} `, named(issued.name), ` (${issued.id}, plan ${issued.plan})`);
  secretParts.value.textContent = issued.key;
  secretParts.panel.hidden = false;
  secretParts.copy.textContent = "Copy";
  secretOf = issued.id;
  placeSecret();
}

/** Brings the secret just shown into view, its Copy button focused. */
function focusSecret(): void {
  if (secretOf === null) return;
  secretParts.panel.scrollIntoView({ block: "nearest" });
  secretParts.copy.focus({ preventScroll: true });
}

/**
 * Forgets the secret shown (Done, a sign-out, the key revoked). `refocus`: the operator
 * pressed Done; focus goes back to the key's row.
 */
function dismissSecret(refocus: boolean): void {
  const of = secretOf;
  secretOf = null;
  // The message beside the key asked to copy the secret below: there is none any more.
  if (of !== null && note?.place === `key:${of}`) {
    note = null;
    placeNote();
  }
  secretParts.value.textContent = "";
  secretParts.title.textContent = "";
  secretParts.panel.hidden = true;
  secretHolder.remove();
  if (!refocus || of === null) return;
  const row = document.querySelector<HTMLElement>(`#keys tr[data-key-id="${CSS.escape(of)}"]`);
  (row?.querySelector<HTMLElement>("button:not(:disabled), select:not(:disabled)") ?? element("new-key-name")).focus();
}

async function copySecret(): Promise<void> {
  const text = secretParts.value.textContent ?? "";
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // No clipboard API (a page not served from localhost or HTTPS): select the text instead.
    const range = document.createRange();
    range.selectNodeContents(secretParts.value);
    getSelection()?.removeAllRanges();
    getSelection()?.addRange(range);
    secretParts.copy.textContent = "Press Ctrl+C";
    return;
  }
  secretParts.copy.textContent = "Copied";
}

interface LimitField {
  readonly cell: HTMLTableCellElement;
  /** The limit in the boxes; throws a FieldError when it is not one. */
  read(): number | null;
  /** Back to the value the row was drawn with, as if never typed into. */
  reset(): void;
}

/**
 * A plan's limit: a number box and, where a limit may be lifted, an explicit
 * "unlimited" box. An empty number is never read as unlimited: the operator ticks it.
 */
function limitField(value: number | null, label: string, name: string, canBeUnlimited: boolean, isNew: boolean): LimitField {
  const cell = make("td", undefined, { class: "limit" });
  const input = make("input", undefined, { type: "number", min: "1", step: "1", "aria-label": label });
  // The saved value is the default: a value typed since is an edit (see renderPlans).
  input.defaultValue = value === null ? "" : String(value);
  cell.append(input);
  let unlimited: HTMLInputElement | null = null;
  if (canBeUnlimited) {
    unlimited = make("input", undefined, { type: "checkbox", "aria-label": `${label}: unlimited` });
    unlimited.defaultChecked = value === null && !isNew;
    const sync = () => {
      input.disabled = unlimited!.checked;
      if (unlimited!.checked) input.value = "";
    };
    unlimited.addEventListener("change", sync);
    sync();
    const choice = make("label", undefined, { class: "unlimited" });
    choice.append(unlimited, " unlimited");
    cell.append(choice);
  }
  return {
    cell,
    read() {
      if (unlimited?.checked) return null;
      const text = input.value.trim();
      const value = Number(text);
      if (text === "" || !Number.isSafeInteger(value) || value < 1) {
        throw new FieldError(`${name} must be a whole number of at least 1${canBeUnlimited ? ", or tick “unlimited”" : ""}; nothing was saved`, input);
      }
      return value;
    },
    reset() {
      input.value = input.defaultValue;
      if (unlimited && unlimited.checked !== unlimited.defaultChecked) {
        unlimited.checked = unlimited.defaultChecked;
        unlimited.dispatchEvent(new Event("change"));
      }
    },
  };
}

/** A plan's limits as the messages say them: `100 a batch, 100,000 units a month, 10 requests a second`. */
function limitsText(plan: PlanLimits): string {
  return `${formatCount(plan.max_batch_size)} a batch, ${formatCount(plan.monthly_units)} ${plan.monthly_units === 1 ? "unit" : "units"} a month, ${formatCount(plan.rate_limit)} ${plan.rate_limit === 1 ? "request" : "requests"} a second`;
}

/** Each limit's name in a plan row's messages, and its box's label (with ` of NAME`). */
const LIMIT_NAMES: Readonly<Record<PlanLimit, string>> = { max_batch_size: "Max batch", monthly_units: "Units a month", rate_limit: "Requests a second" };

function planRow(plan: Plan | null): HTMLTableRowElement {
  const place = `plan:${plan?.name ?? "+new"}`;
  const row = make("tr", undefined, { "data-plan": plan?.name ?? "", "data-place": place });
  const name = plan ? make("td", plan.name, { class: "mono" }) : make("td");
  const nameInput = make("input", undefined, { "aria-label": "New plan's name", placeholder: "new plan", maxlength: "64" });
  if (!plan) name.append(nameInput);
  const of = plan?.name ?? "the new plan";
  const batch = limitField(plan?.max_batch_size ?? null, `${LIMIT_NAMES.max_batch_size} of ${of}`, LIMIT_NAMES.max_batch_size, false, !plan);
  const units = limitField(plan?.monthly_units ?? null, `${LIMIT_NAMES.monthly_units} of ${of}`, LIMIT_NAMES.monthly_units, true, !plan);
  const rate = limitField(plan?.rate_limit ?? null, `${LIMIT_NAMES.rate_limit} of ${of}`, LIMIT_NAMES.rate_limit, true, !plan);
  const fields: Readonly<Record<PlanLimit, LimitField>> = { max_batch_size: batch, monthly_units: units, rate_limit: rate };
  const save = make("button", plan ? "Save" : "Add plan", { type: "button", class: "write" });
  save.addEventListener("click", () =>
    attempt(async () => {
      const planName = plan?.name ?? nameInput.value.trim();
      if (planName === "") throw new FieldError("Give the new plan a name; nothing was saved", nameInput);
      // Max batch has no "unlimited" box: it reads a number or throws.
      const typed: PlanLimits = { max_batch_size: batch.read()!, monthly_units: units.read(), rate_limit: rate.read() };
      let body = typed;
      // PUT creates or replaces: a name that is taken would overwrite that plan's limits
      // from the row meant for new ones. The plans are read again first (another operator
      // may have added it since the page drew them).
      if (!plan) await refuseExistingPlan(planName, nameInput);
      else {
        // PUT takes all three limits, and the row shows them as they were when it was
        // drawn: the plan is read again first, so that a limit changed meanwhile elsewhere
        // (the CLI, another console) and not in this row keeps its new value, and a limit
        // changed in both places is not overwritten unseen (see planSave).
        const listed = (await api<{ plans: Plan[] }>("GET", "/admin/v1/plans")).plans;
        const current = listed.find((existing) => existing.name === plan.name);
        if (!current) {
          plans = listed;
          renderPlans();
          throw new Error(`Plan ${plan.name} is no longer listed; nothing was saved`);
        }
        const decided = planSave(plan, typed, current);
        if ("conflicts" in decided) {
          changedMeanwhile(place, plan, typed, current, decided.conflicts, fields, listed);
          return;
        }
        body = decided.body;
      }
      const saved = await api<Plan>("PUT", `/admin/v1/plans/${encodeURIComponent(planName)}`, body);
      savedPlanRow = place;
      await refresh();
      say(`Plan ${saved.name} saved: ${limitsText(saved)}.`, false, `plan:${saved.name}`);
    }, place),
  );
  const actions = make("td", undefined, { class: "actions" });
  actions.append(save);
  row.append(name, batch.cell, units.cell, rate.cell, actions);
  // Enter in a field saves its row, as in a form.
  row.addEventListener("keydown", (event) => {
    if (event.key !== "Enter" || !(event.target instanceof HTMLInputElement)) return;
    event.preventDefault();
    save.click();
  });
  return row;
}

/**
 * Says beside a plan's row that nothing was saved because a limit changed in it was also
 * changed elsewhere since the row was drawn: each such limit as the row showed it, as
 * typed and as it is now, and the plan's limits now. The plans are drawn again as they
 * are now; in this row, the limits in conflict show their current values (marked), and
 * the operator's other changes are kept, so that they decide and save again.
 */
function changedMeanwhile(place: string, drawn: Plan, typed: PlanLimits, current: Plan, conflicts: readonly PlanLimit[], fields: Readonly<Record<PlanLimit, LimitField>>, listed: Plan[]): void {
  for (const limit of conflicts) fields[limit].reset();
  const othersKept = PLAN_LIMIT_NAMES.some((limit) => !conflicts.includes(limit) && typed[limit] !== drawn[limit]);
  plans = listed;
  renderPlans();
  const boxes = [...document.querySelectorAll<HTMLInputElement>(`#plans tr[data-place="${CSS.escape(place)}"] input`)];
  for (const limit of conflicts) boxes.find((box) => box.getAttribute("aria-label") === `${LIMIT_NAMES[limit]} of ${current.name}`)?.setAttribute("aria-invalid", "true");
  const each = conflicts.map((limit) => `${LIMIT_NAMES[limit]}: this row showed ${formatCount(drawn[limit])}, you typed ${formatCount(typed[limit])}, it is now ${formatCount(current[limit])}`);
  say(
    `Plan ${current.name} was changed elsewhere since this row was drawn, so nothing was saved. ${each.join("; ")}. Its limits now: ${limitsText(current)}. The row shows them${othersKept ? ", with your other changes kept" : ""}: type what you want and save again.`,
    true,
    place,
  );
}

/**
 * Refuses a new plan's name that a plan has already, as the store compares names: exactly,
 * letter case included (`Free` is another plan than `free`). A plan added elsewhere since
 * the page drew the plans is drawn first, so that the row the message names is there.
 */
async function refuseExistingPlan(name: string, nameInput: HTMLInputElement): Promise<void> {
  const listed = (await api<{ plans: Plan[] }>("GET", "/admin/v1/plans")).plans;
  if (!listed.some((existing) => existing.name === name)) return;
  if (!plans.some((existing) => existing.name === name)) {
    plans = listed;
    renderPlans();
  }
  const input = document.querySelector<HTMLInputElement>('#plans tr[data-plan=""] input[aria-label="New plan\'s name"]') ?? nameInput;
  throw new FieldError(`A plan named ${name} exists already: to change its limits, edit its row (${name}) above. Give the new plan another name; nothing was saved`, input);
}

/** The plan row (its data-place) whose edits were just saved, so drawing the plans again shows what was saved there. */
let savedPlanRow: string | null = null;

/**
 * Draws the plans again, from what was last loaded. Whatever the operator typed in
 * another row and has not saved yet is kept (the page draws the plans again after any
 * change: a key's plan, another plan saved), except in the row just saved.
 */
function renderPlans(): void {
  const body = element("plans").querySelector("tbody")!;
  const edits = new Map<string, { value: string; checked: boolean }>();
  const fieldsOf = (root: ParentNode) =>
    [...root.querySelectorAll<HTMLInputElement>("tr[data-place] input")].map((input) => ({ input, id: `${input.closest("tr")!.dataset.place}|${input.getAttribute("aria-label")}` }));
  for (const { input, id } of fieldsOf(body)) {
    if (input.value !== input.defaultValue || input.checked !== input.defaultChecked) edits.set(id, { value: input.value, checked: input.checked });
  }
  body.replaceChildren(...plans.map(planRow), planRow(null));
  for (const { input, id } of fieldsOf(body)) {
    const edit = edits.get(id);
    if (!edit || id.startsWith(`${savedPlanRow}|`)) continue;
    input.value = edit.value;
    if (input.type === "checkbox" && input.checked !== edit.checked) {
      input.checked = edit.checked;
      input.dispatchEvent(new Event("change"));
    }
  }
  savedPlanRow = null;
  placeNote();
}

function renderUsageKeyChoice(): void {
  const select = element<HTMLSelectElement>("usage-key");
  const chosen = select.value;
  select.replaceChildren(make("option", "All keys", { value: "" }), ...keys.map((key) => make("option", `${isolate(key.name)} (${key.id})`, { value: key.id })));
  select.value = keys.some((key) => key.id === chosen) ? chosen : "";
}

/**
 * Counts the use asked for: an answer overtaken by a later request (another key chosen
 * while the page still loads every key's use) is not drawn, so the chart always shows the
 * choice the select shows, whichever answer comes last.
 */
let usageAsked = 0;

async function loadUsage(): Promise<void> {
  const asked = ++usageAsked;
  const key = element<HTMLSelectElement>("usage-key").value;
  const usage = await api<Usage>("GET", `/admin/v1/usage${key === "" ? "" : `?key=${encodeURIComponent(key)}`}`);
  if (asked !== usageAsked) return;
  renderChart(usage);
  renderTopKeys(usage);
}

/** The legend under the chart: the hovered day, else the latest one, never empty labels. */
function showLegend(usage: Usage, index: number | null): void {
  const day = usage.days[index ?? usage.days.length - 1];
  const legend = element("usage-legend");
  if (!day) {
    legend.textContent = "";
    return;
  }
  legend.replaceChildren(make("strong", day.date), ` ${numbers.format(day.units)} unit${day.units === 1 ? "" : "s"} · ${numbers.format(day.requests)} request${day.requests === 1 ? "" : "s"}`);
  legend.dataset.day = day.date;
}

function chartWidth(container: HTMLElement): number {
  return Math.max(200, container.clientWidth);
}

function renderChart(usage: Usage): void {
  const container = element("usage-chart");
  const xs = usage.days.map((day) => Date.parse(`${day.date}T00:00:00Z`) / 1000);
  const units = usage.days.map((day) => day.units);
  const today = usage.days[usage.days.length - 1];
  const total = units.reduce((sum, value) => sum + value, 0);
  container.dataset.todayUnits = String(today?.units ?? 0);
  const firstUse = units.findIndex((value) => value > 0);
  // The days shown: from the day before the first use, a week at least (see rules.ts).
  const shownFrom = firstShownDay(units);
  container.dataset.shownFrom = usage.days[shownFrom]?.date ?? "";
  const plural = (count: number, word: string) => `${numbers.format(count)} ${word}${count === 1 ? "" : "s"}`;
  element("usage-summary").textContent =
    `Today (${today?.date ?? "?"}): ${plural(today?.units ?? 0, "unit")} in ${plural(today?.requests ?? 0, "request")} · ${usage.from} to ${usage.to}: ${plural(total, "unit")}` +
    (firstUse > 0 ? ` (none before ${usage.days[firstUse]?.date})` : "");
  showLegend(usage, null);
  const width = chartWidth(container);
  if (chart) {
    chart.destroy();
    chart = null;
  }
  const options: uPlot.Options = {
    width,
    height: 240,
    // Days are UTC days: the axis says so, whatever the browser's time zone.
    tzDate: (seconds) => uPlot.tzDate(new Date(seconds * 1000), "Etc/UTC"),
    // Half a day either side, so the first and last days' bars show whole; the days
    // before the first use (but a week at least) are left out, so that a single day of
    // use is a bar among labelled days, not a sliver at the edge of a month.
    scales: {
      x: { time: true, range: () => [(xs[shownFrom] ?? 0) - 43_200, (xs[xs.length - 1] ?? 0) + 43_200] },
      y: { range: (_chart, _min, max) => [0, Math.max(5, Math.ceil(max * 1.15))] },
    },
    axes: [
      { stroke: "#6b7280", grid: { show: false } },
      // Whole units only: a step of 1 at least, never 2.5.
      {
        stroke: "#6b7280",
        size: 56,
        grid: { stroke: "#eef0f3" },
        incrs: [...WHOLE_STEPS],
        values: (_chart, ticks) => {
          // The ticks drawn, for whoever checks the axis (the browser tests).
          container.dataset.yTicks = ticks.join(",");
          return ticks.map((tick) => compact.format(tick));
        },
      },
    ],
    legend: { show: false },
    hooks: { setCursor: [(plot) => showLegend(usage, plot.cursor.idx ?? null)] },
    series: [
      { label: "Day", value: (_chart, seconds) => (seconds === null ? "" : new Date(seconds * 1000).toISOString().slice(0, 10)) },
      {
        label: "Units",
        stroke: "#1d4ed8",
        fill: "rgba(29, 78, 216, 0.35)",
        width: 1,
        paths: uPlot.paths.bars!({ size: [0.7, 28], align: 0 }),
        points: { show: false },
        value: (_chart, value) => (value === null ? "" : numbers.format(value)),
      },
    ],
    cursor: { drag: { x: false, y: false } },
  };
  chart = new uPlot(options, [xs, units], container);
}

function renderTopKeys(usage: Usage): void {
  const rows = usage.keys.slice(0, TOP_KEYS).map((key) => {
    const row = make("tr");
    const name = make("td", key.name, { class: "key-name", title: key.id });
    row.append(name, make("td", numbers.format(key.requests), { class: "num" }), make("td", numbers.format(key.units), { class: "num" }));
    return row;
  });
  if (rows.length === 0) {
    const empty = make("tr");
    empty.append(make("td", "No use in these days.", { colspan: "3", class: "muted" }));
    rows.push(empty);
  }
  element("top-keys").querySelector("tbody")!.replaceChildren(...rows);
}

// ---- wiring ---------------------------------------------------------------------------

function start(): void {
  corrections = correctionsSection({ api, attempt, say, loadAudit });
  element("sign-in-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const input = element<HTMLInputElement>("token-input");
    const candidate = input.value;
    input.value = "";
    void signIn(candidate);
  });
  element("sign-out").addEventListener("click", () => showSignIn());
  element("create-key-form").addEventListener("submit", (event) => {
    event.preventDefault();
    void attempt(async () => {
      const name = element<HTMLInputElement>("new-key-name");
      // Plans not drawn yet (the page still loading as the form is sent): the server's default plan, not a plan named "".
      const plan = element<HTMLSelectElement>("new-key-plan").value;
      const issued = await api<IssuedKey>("POST", "/admin/v1/keys", { name: name.value, ...(plan === "" ? {} : { plan }) });
      name.value = "";
      showSecret(issued, "Created key");
      await refresh();
      say(["Key ", named(issued.name), ` created on plan ${issued.plan}; copy its secret below now.`], false, `key:${issued.id}`);
      focusSecret();
    }, "create-key");
  });
  element("copy-secret").addEventListener("click", () => void copySecret());
  element("dismiss-secret").addEventListener("click", () => dismissSecret(true));
  const secretCell = make("td", undefined, { colspan: "8" });
  secretCell.append(secretParts.panel);
  secretHolder.append(secretCell);
  element("usage-key").addEventListener("change", () => void attempt(loadUsage, "usage"));
  startAsnLookup({ get: (path) => api("GET", path) });
  // The legend of the chart, under it (uPlot's own reads "Day: · Units:" until hovered).
  element("usage-chart").after(make("p", undefined, { id: "usage-legend", class: "legend" }));
  // `/console#token=…` typed into a tab already on /console changes only the fragment:
  // sign in with it, and take it out of the address bar, as on a first load.
  window.addEventListener("hashchange", () => {
    const typed = tokenFromFragment();
    if (typed) void signIn(typed);
  });
  window.addEventListener("resize", () => chart?.setSize({ width: chartWidth(element("usage-chart")), height: 240 }));
  // The key controls' editor and the audit log (key-controls-panel.ts, audit-page.ts).
  const hooks: ConsoleHooks = { api, refresh, attempt, say, unsay, showSecret, focusSecret, planNames: () => plans.map((plan) => plan.name) };
  initKeyControls(hooks);
  initAuditPage(hooks);

  const fromFragment = tokenFromFragment();
  const saved = fromFragment ?? sessionStorage.getItem(TOKEN_STORAGE);
  if (saved) void signIn(saved);
  else showSignIn();
}

start();

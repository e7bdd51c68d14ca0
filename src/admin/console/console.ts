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

interface Problem {
  readonly status: number;
  readonly code: string;
  readonly detail: string;
}
interface Key {
  readonly id: string;
  readonly name: string;
  readonly plan: string;
  readonly created_at: string;
  readonly revoked_at: string | null;
  readonly last_used_at: string | null;
  readonly units_this_period: number;
}
interface IssuedKey {
  readonly id: string;
  readonly key: string;
  readonly name: string;
  readonly plan: string;
}
interface Plan {
  readonly name: string;
  readonly max_batch_size: number;
  readonly monthly_units: number | null;
  readonly rate_limit: number | null;
}
interface Usage {
  readonly from: string;
  readonly to: string;
  readonly days: readonly { readonly date: string; readonly requests: number; readonly units: number }[];
  readonly keys: readonly { readonly id: string; readonly name: string; readonly requests: number; readonly units: number }[];
}
interface Source {
  readonly name: string;
  readonly origin: string;
  readonly version: string;
  readonly built_at: string | null;
  readonly license: string;
  readonly attribution: string;
  readonly url: string;
}
interface Status {
  readonly version: string;
  readonly uptime_seconds: number;
  readonly workers: number;
  readonly data: { readonly data_version: string; readonly built_at: string; readonly sources: readonly Source[] };
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

function element<T extends HTMLElement = HTMLElement>(id: string): T {
  const found = document.getElementById(id);
  if (!found) throw new Error(`the page has no #${id}`);
  return found as T;
}

/** A new element with text content and attributes: nothing is parsed as HTML. */
function make<K extends keyof HTMLElementTagNameMap>(tag: K, text?: string, attributes: Record<string, string> = {}): HTMLElementTagNameMap[K] {
  const created = document.createElement(tag);
  if (text !== undefined) created.textContent = text;
  for (const [name, value] of Object.entries(attributes)) created.setAttribute(name, value);
  return created;
}

async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { authorization: `Bearer ${token ?? ""}` };
  if (body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: "no-store" });
  const text = await response.text();
  const data: unknown = text === "" ? null : JSON.parse(text);
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

/** `3 days ago`, `in 2 hours`. */
function ago(iso: string): string {
  const seconds = (Date.parse(iso) - Date.now()) / 1000;
  const units: [Intl.RelativeTimeFormatUnit, number][] = [["year", 31_536_000], ["month", 2_592_000], ["day", 86_400], ["hour", 3600], ["minute", 60]];
  for (const [unit, size] of units) if (Math.abs(seconds) >= size) return relative.format(Math.round(seconds / size), unit);
  return "just now";
}

function formatDuration(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`;
  return `${Math.floor(seconds / 86_400)} d ${Math.floor((seconds % 86_400) / 3600)} h`;
}

// ---- messages -----------------------------------------------------------------------

function say(text: string, isError = false): void {
  const message = element("message");
  message.textContent = text;
  message.classList.toggle("error-message", isError);
  message.hidden = false;
}

/** Runs an action, saying what went wrong (a refusal's detail) instead of throwing. */
async function attempt(action: () => Promise<void>): Promise<void> {
  try {
    await action();
  } catch (error) {
    if (error instanceof ApiFailure && error.problem.status === 401) return;
    say(error instanceof ApiFailure ? `${error.problem.detail} (${error.problem.code})` : String(error), true);
  }
}

// ---- signing in -----------------------------------------------------------------------

function showSignIn(reason?: string): void {
  token = null;
  sessionStorage.removeItem(TOKEN_STORAGE);
  element("signed-in").hidden = true;
  element("sign-out").hidden = true;
  element("server-info").textContent = "";
  element("sign-in").hidden = false;
  const error = element("sign-in-error");
  error.hidden = reason === undefined;
  error.textContent = reason ?? "";
  element<HTMLInputElement>("token-input").focus();
}

async function signIn(candidate: string): Promise<void> {
  token = candidate.trim();
  try {
    const status = await api<Status>("GET", "/admin/v1/status");
    sessionStorage.setItem(TOKEN_STORAGE, token);
    element("sign-in").hidden = true;
    element("signed-in").hidden = false;
    element("sign-out").hidden = false;
    renderStatus(status);
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

async function refresh(): Promise<void> {
  const [keyList, planList] = await Promise.all([api<{ keys: Key[] }>("GET", "/admin/v1/keys"), api<{ plans: Plan[] }>("GET", "/admin/v1/plans")]);
  keys = keyList.keys;
  plans = planList.plans;
  renderKeys();
  renderPlans();
  renderUsageKeyChoice();
  await loadUsage();
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
  const rows = data.sources.map((source) => {
    const row = make("tr");
    const name = make("td");
    name.append(make("strong", source.name), make("br"), make("span", source.origin, { class: "muted" }));
    const attribution = make("td", source.attribution);
    if (/^https?:\/\//.test(source.url)) attribution.append(" ", make("a", source.url, { href: source.url, rel: "noreferrer noopener", target: "_blank" }));
    row.append(name, make("td", source.version), make("td", source.built_at ? `${source.built_at.slice(0, 10)} (${ago(source.built_at)})` : "not stated"), make("td", source.license), attribution);
    return row;
  });
  element("sources").querySelector("tbody")!.replaceChildren(...rows);
}

function planOptions(select: HTMLSelectElement, chosen: string): void {
  select.replaceChildren(...plans.map((plan) => make("option", plan.name, plan.name === chosen ? { value: plan.name, selected: "" } : { value: plan.name })));
  select.value = chosen;
}

function renderKeys(): void {
  const newPlan = element<HTMLSelectElement>("new-key-plan");
  planOptions(newPlan, plans.some((plan) => plan.name === newPlan.value) ? newPlan.value : plans.some((plan) => plan.name === "free") ? "free" : (plans[0]?.name ?? ""));
  const rows = keys.map((key) => {
    const row = make("tr", undefined, { "data-key-id": key.id });
    if (key.revoked_at) row.classList.add("revoked");
    const plan = make("select", undefined, { "aria-label": `Plan of ${key.name}`, class: "key-plan" });
    planOptions(plan, key.plan);
    plan.disabled = key.revoked_at !== null;
    plan.addEventListener("change", () =>
      attempt(async () => {
        const moved = await api<Key>("PATCH", `/admin/v1/keys/${encodeURIComponent(key.id)}`, { plan: plan.value });
        say(`Key ${moved.name} is now on plan ${moved.plan}; its secret is unchanged.`);
        await refresh();
      }),
    );
    const planCell = make("td");
    planCell.append(plan);
    const status = make("td", key.revoked_at ? `revoked ${key.revoked_at.slice(0, 10)}` : "active", { class: key.revoked_at ? "status-revoked" : "status-active" });
    const actions = make("td", undefined, { class: "actions" });
    if (!key.revoked_at) {
      const rotate = make("button", "Rotate", { type: "button", class: "quiet" });
      rotate.addEventListener("click", () =>
        attempt(async () => {
          if (!confirm(`Give ${key.name} a new secret? The old one stops working within a second.`)) return;
          showSecret(await api<IssuedKey>("POST", `/admin/v1/keys/${encodeURIComponent(key.id)}/rotate`), "Rotated key");
          await refresh();
        }),
      );
      const revoke = make("button", "Revoke", { type: "button", class: "danger" });
      revoke.addEventListener("click", () =>
        attempt(async () => {
          if (!confirm(`Revoke ${key.name} (${key.id}) for good?`)) return;
          const revoked = await api<Key>("POST", `/admin/v1/keys/${encodeURIComponent(key.id)}/revoke`);
          say(`Key ${revoked.name} is revoked.`);
          await refresh();
        }),
      );
      actions.append(rotate, revoke);
    }
    const last = make("td", key.last_used_at ? ago(key.last_used_at) : "never", key.last_used_at ? { title: formatTime(key.last_used_at) } : {});
    row.append(make("td", key.name), make("td", key.id, { class: "mono" }), planCell, make("td", key.created_at.slice(0, 10)), last, make("td", numbers.format(key.units_this_period), { class: "num" }), status, actions);
    return row;
  });
  if (rows.length === 0) {
    const empty = make("tr");
    empty.append(make("td", "No keys yet: create one above.", { colspan: "8", class: "muted" }));
    rows.push(empty);
  }
  element("keys").querySelector("tbody")!.replaceChildren(...rows);
}

function showSecret(issued: IssuedKey, title: string): void {
  element("secret-title").textContent = `${title} ${issued.name} (${issued.id}, plan ${issued.plan})`;
  element("secret-value").textContent = issued.key;
  element("secret-panel").hidden = false;
  element("copy-secret").textContent = "Copy";
}

async function copySecret(): Promise<void> {
  const text = element("secret-value").textContent ?? "";
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // No clipboard API (a page not served from localhost or HTTPS): select the text instead.
    const range = document.createRange();
    range.selectNodeContents(element("secret-value"));
    getSelection()?.removeAllRanges();
    getSelection()?.addRange(range);
    element("copy-secret").textContent = "Press Ctrl+C";
    return;
  }
  element("copy-secret").textContent = "Copied";
}

function limitInput(value: number | null, label: string): HTMLInputElement {
  const input = make("input", undefined, { type: "number", min: "1", step: "1", "aria-label": label, placeholder: "unlimited" });
  input.value = value === null ? "" : String(value);
  return input;
}

/** A limit field's value: a whole number of at least 1, or null (empty: unlimited, where allowed). */
function readLimit(input: HTMLInputElement, name: string, unlimited: boolean): number | null {
  const text = input.value.trim();
  if (text === "" && unlimited) return null;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`${name} must be a whole number of at least 1${unlimited ? ", or empty for unlimited" : ""}`);
  return value;
}

function planRow(plan: Plan | null): HTMLTableRowElement {
  const row = make("tr", undefined, { "data-plan": plan?.name ?? "" });
  const name = plan ? make("td", plan.name, { class: "mono" }) : make("td");
  const nameInput = make("input", undefined, { "aria-label": "New plan's name", placeholder: "new plan", maxlength: "64" });
  if (!plan) name.append(nameInput);
  const batch = limitInput(plan?.max_batch_size ?? null, `Max batch of ${plan?.name ?? "the new plan"}`);
  batch.placeholder = "";
  const units = limitInput(plan?.monthly_units ?? null, `Units a month of ${plan?.name ?? "the new plan"}`);
  const rate = limitInput(plan?.rate_limit ?? null, `Requests a second of ${plan?.name ?? "the new plan"}`);
  const save = make("button", plan ? "Save" : "Add plan", { type: "button" });
  save.addEventListener("click", () =>
    attempt(async () => {
      const planName = plan?.name ?? nameInput.value.trim();
      if (planName === "") throw new Error("give the new plan a name");
      const body = { max_batch_size: readLimit(batch, "max batch", false), monthly_units: readLimit(units, "units a month", true), rate_limit: readLimit(rate, "requests a second", true) };
      const saved = await api<Plan>("PUT", `/admin/v1/plans/${encodeURIComponent(planName)}`, body);
      say(`Plan ${saved.name}: ${formatCount(saved.max_batch_size)} a batch, ${formatCount(saved.monthly_units)} units a month, ${formatCount(saved.rate_limit)} requests a second.`);
      await refresh();
    }),
  );
  const cells = [batch, units, rate].map((input) => {
    const cell = make("td");
    cell.append(input);
    return cell;
  });
  const actions = make("td", undefined, { class: "actions" });
  actions.append(save);
  row.append(name, ...cells, actions);
  return row;
}

function renderPlans(): void {
  element("plans").querySelector("tbody")!.replaceChildren(...plans.map(planRow), planRow(null));
}

function renderUsageKeyChoice(): void {
  const select = element<HTMLSelectElement>("usage-key");
  const chosen = select.value;
  select.replaceChildren(make("option", "All keys", { value: "" }), ...keys.map((key) => make("option", `${key.name} (${key.id})`, { value: key.id })));
  select.value = keys.some((key) => key.id === chosen) ? chosen : "";
}

async function loadUsage(): Promise<void> {
  const key = element<HTMLSelectElement>("usage-key").value;
  const usage = await api<Usage>("GET", `/admin/v1/usage${key === "" ? "" : `?key=${encodeURIComponent(key)}`}`);
  renderChart(usage);
  renderTopKeys(usage);
}

function renderChart(usage: Usage): void {
  const container = element("usage-chart");
  const xs = usage.days.map((day) => Date.parse(`${day.date}T00:00:00Z`) / 1000);
  const units = usage.days.map((day) => day.units);
  const today = usage.days[usage.days.length - 1];
  const total = units.reduce((sum, value) => sum + value, 0);
  container.dataset.todayUnits = String(today?.units ?? 0);
  element("usage-summary").textContent = `Today (${today?.date ?? "?"}): ${numbers.format(today?.units ?? 0)} units in ${numbers.format(today?.requests ?? 0)} requests · ${usage.from} to ${usage.to}: ${numbers.format(total)} units`;
  const width = Math.max(320, container.clientWidth);
  if (chart) {
    chart.setData([xs, units]);
    chart.setSize({ width, height: 240 });
    return;
  }
  const options: uPlot.Options = {
    width,
    height: 240,
    // Days are UTC days: the axis says so, whatever the browser's time zone.
    tzDate: (seconds) => uPlot.tzDate(new Date(seconds * 1000), "Etc/UTC"),
    // Half a day either side, so the first and last days' bars show whole.
    scales: { x: { time: true, range: (_chart, min, max) => [min - 43_200, max + 43_200] }, y: { range: (_chart, _min, max) => [0, Math.max(10, Math.ceil(max * 1.15))] } },
    axes: [{ stroke: "#6b7280", grid: { show: false } }, { stroke: "#6b7280", size: 56, grid: { stroke: "#eef0f3" }, values: (_chart, ticks) => ticks.map((tick) => compact.format(tick)) }],
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
    const name = make("td", key.name, { title: key.id });
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
      const issued = await api<IssuedKey>("POST", "/admin/v1/keys", { name: name.value, plan: element<HTMLSelectElement>("new-key-plan").value });
      name.value = "";
      showSecret(issued, "Created key");
      await refresh();
    });
  });
  element("copy-secret").addEventListener("click", () => void copySecret());
  element("dismiss-secret").addEventListener("click", () => {
    element("secret-value").textContent = "";
    element("secret-panel").hidden = true;
  });
  element("usage-key").addEventListener("change", () => void attempt(loadUsage));
  window.addEventListener("resize", () => chart?.setSize({ width: Math.max(320, element("usage-chart").clientWidth), height: 240 }));

  const fromFragment = tokenFromFragment();
  const saved = fromFragment ?? sessionStorage.getItem(TOKEN_STORAGE);
  if (saved) void signIn(saved);
  else showSignIn();
}

start();

/**
 * The console's part of the key controls (CONTRACT §16): a summary of each key's
 * controls in the keys table, an editor (section #key-editor) to create a key with
 * controls or change a key's plan and controls, and the grace asked for at rotation.
 * Refusals are shown in the editor itself, where the operator acted.
 */
import type { Key } from "./api-types.ts";
import { byId, describeError, make, type ConsoleHooks } from "./console-hooks.ts";
import { isolate, jsonParts, named } from "./dom.ts";
import { keyMetadata } from "./rules.ts";

let hooks: ConsoleHooks | null = null;
/** The key being edited, or null while creating one. */
let editing: Key | null = null;
/**
 * The editor's fields as they were opened, by id: an edit sends only the fields changed
 * since, so that a field shown rounded (an expiry's seconds) or one that could not be
 * sent again as it is (an expiry already past) is left as it is.
 */
let opened = new Map<string, string>();
const FIELDS = ["key-editor-plan", "key-editor-expires", "key-editor-cidrs", "key-editor-origins", "key-editor-metadata"] as const;

/** Wires the editor; called once, when the page starts. */
export function initKeyControls(consoleHooks: ConsoleHooks): void {
  hooks = consoleHooks;
  const options = make("button", "Options…", { type: "button", class: "quiet", id: "new-key-options", title: "Create a key with an expiry, allowlists or metadata" });
  options.addEventListener("click", () => {
    const name = byId<HTMLInputElement>("new-key-name").value;
    const plan = byId<HTMLSelectElement>("new-key-plan").value;
    openEditor(null, name, plan);
  });
  byId("create-key-form").append(options);
  byId("key-editor-form").addEventListener("submit", (event) => {
    event.preventDefault();
    void save();
  });
  byId("key-editor-cancel").addEventListener("click", () => closeEditor(true));
  byId("key-editor").addEventListener("keydown", (event) => {
    if (event.key === "Escape") closeEditor(true);
  });
}

/** Adds the key's controls under its name and an Edit button among its actions. */
export function decorateKeyRow(key: Key, nameCell: HTMLElement, actions: HTMLElement): void {
  const summary = controlsSummary(key);
  if (summary.length > 0) {
    const line = make("div", summary.join(" · "), { class: "key-controls muted" });
    line.title = details(key);
    nameCell.append(line);
  }
  if (key.revoked_at) return;
  const edit = make("button", "Edit", { type: "button", class: "quiet write", "data-edit-key": key.id });
  edit.addEventListener("click", () => openEditor(key));
  actions.prepend(edit);
}

/**
 * Asks how long a rotated key's old secret keeps working: the grace to send (`24h`),
 * "" for none, or null when the operator cancels.
 */
export function askGrace(name: string): string | null {
  const answer = prompt(`Give ${isolate(name)} a new secret.\n\nHow long may the old secret keep working? (e.g. 24h, 90m, 7d; empty: it stops within a second)`, "");
  if (answer === null) return null;
  return answer.trim();
}

/** The controls of a key in a few words, for its row. */
export function controlsSummary(key: Key): string[] {
  const parts: string[] = [];
  if (key.expires_at) parts.push(Date.parse(key.expires_at) <= Date.now() ? `expired ${key.expires_at.slice(0, 10)}` : `expires ${key.expires_at.slice(0, 10)}`);
  if (key.allowed_cidrs) parts.push(plural(key.allowed_cidrs.length, "address block"));
  if (key.allowed_origins) parts.push(plural(key.allowed_origins.length, "origin"));
  if (key.metadata && Object.keys(key.metadata).length > 0) parts.push("metadata");
  if (key.grace_until && !key.revoked_at && Date.parse(key.grace_until) > Date.now()) parts.push(`old secret until ${key.grace_until.slice(0, 16).replace("T", " ")} UTC`);
  return parts;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

function details(key: Key): string {
  const lines: string[] = [];
  if (key.expires_at) lines.push(`expires ${key.expires_at}`);
  if (key.allowed_cidrs) lines.push(`addresses: ${key.allowed_cidrs.join(", ")}`);
  // The operator's text, isolated (see isolate): an override in an origin or a metadata
  // value cannot turn around the rest of its line of the tooltip.
  if (key.allowed_origins) lines.push(`origins: ${key.allowed_origins.map(isolate).join(", ")}`);
  if (key.metadata && Object.keys(key.metadata).length > 0) lines.push(`metadata: ${jsonParts(key.metadata, isolate).join("")}`);
  return lines.join("\n");
}

function openEditor(key: Key | null, name = "", plan = "free"): void {
  editing = key;
  byId("key-editor-title").replaceChildren(...(key ? ["Edit key ", named(key.name)] : ["New key"]));
  byId("key-editor-id").textContent = key ? key.id : "";
  const nameInput = byId<HTMLInputElement>("key-editor-name");
  nameInput.value = key ? key.name : name;
  nameInput.disabled = key !== null;
  const select = byId<HTMLSelectElement>("key-editor-plan");
  const chosen = key ? key.plan : plan;
  select.replaceChildren(...(hooks?.planNames() ?? []).map((planName) => make("option", planName, { value: planName })));
  select.value = chosen;
  byId<HTMLInputElement>("key-editor-expires").value = key?.expires_at ? key.expires_at.slice(0, 16) : "";
  byId<HTMLTextAreaElement>("key-editor-cidrs").value = (key?.allowed_cidrs ?? []).join("\n");
  byId<HTMLTextAreaElement>("key-editor-origins").value = (key?.allowed_origins ?? []).join("\n");
  const metadata = key?.metadata ?? {};
  byId<HTMLTextAreaElement>("key-editor-metadata").value = Object.keys(metadata).length > 0 ? JSON.stringify(metadata, null, 2) : "";
  byId("key-editor-save").textContent = key ? "Save" : "Create key";
  opened = new Map(FIELDS.map((id) => [id, byId<HTMLInputElement>(id).value]));
  showError(null);
  const section = byId("key-editor");
  section.hidden = false;
  section.scrollIntoView({ block: "nearest" });
  (key ? select : nameInput).focus();
}

/**
 * Closes the editor, its fields left for the next opening to fill. `refocus`: the
 * operator cancelled; the page goes back to where the editor was opened from (the key's
 * row, or the form to create one), focus with it.
 */
export function closeEditor(refocus: boolean): void {
  const was = editing;
  editing = null;
  byId("key-editor").hidden = true;
  showError(null);
  if (refocus) backTo(was?.id ?? null);
}

/** Focus on the Edit button of a key's row (null: the name of a new key), scrolled into view. */
function backTo(keyId: string | null): void {
  const target = keyId === null ? null : document.querySelector<HTMLElement>(`#keys [data-edit-key="${CSS.escape(keyId)}"]`);
  const focused = target ?? byId("new-key-name");
  focused.focus({ preventScroll: true });
  (focused.closest("tr") ?? focused).scrollIntoView({ block: "nearest" });
}

function showError(text: string | null): void {
  const error = byId("key-editor-error");
  error.hidden = text === null;
  error.textContent = text ?? "";
}

/** The editor's fields as the admin API's body: empty fields clear their control. */
function body(): Record<string, unknown> {
  // Address blocks hold no space, so any space or comma parts them; origins are one a
  // line (as the field says), so that a mistyped one is refused as typed, whole.
  const list = (id: string, separators: RegExp) =>
    byId<HTMLTextAreaElement>(id)
      .value.split(separators)
      .map((item) => item.trim())
      .filter((item) => item !== "");
  const expires = byId<HTMLInputElement>("key-editor-expires").value.trim();
  const metadata = keyMetadata(byId<HTMLTextAreaElement>("key-editor-metadata").value);
  const fields: Record<string, unknown> = {
    plan: byId<HTMLSelectElement>("key-editor-plan").value,
    // The field is read as UTC, as the page says.
    expires_at: expires === "" ? null : `${expires.length === 16 ? `${expires}:00` : expires}Z`,
    allowed_cidrs: list("key-editor-cidrs", /[\s,]+/),
    allowed_origins: list("key-editor-origins", /\r?\n/),
    metadata,
  };
  if (editing) {
    const names: Record<(typeof FIELDS)[number], string> = {
      "key-editor-plan": "plan",
      "key-editor-expires": "expires_at",
      "key-editor-cidrs": "allowed_cidrs",
      "key-editor-origins": "allowed_origins",
      "key-editor-metadata": "metadata",
    };
    for (const id of FIELDS) if (byId<HTMLInputElement>(id).value === opened.get(id)) delete fields[names[id]];
  }
  return fields;
}

async function save(): Promise<void> {
  if (!hooks) return;
  // Narrowed once: TypeScript forgets a module variable's narrowing across the awaits below.
  const page = hooks;
  try {
    const fields = body();
    // The message is said beside the key's row, where the editor was opened from or
    // where the new key is listed, once the keys are drawn again.
    if (editing) {
      const key = editing;
      const saved = await page.api<Key>("PATCH", `/admin/v1/keys/${encodeURIComponent(key.id)}`, fields);
      closeEditor(false);
      await page.refresh();
      page.say(["Key ", named(saved.name), ` saved: plan ${saved.plan}${controlsSummary(saved).length ? `, ${controlsSummary(saved).join(", ")}` : ", no controls"}.`], false, `key:${saved.id}`);
      backTo(saved.id);
    } else {
      const name = byId<HTMLInputElement>("key-editor-name").value;
      const created = await page.api<{ id: string; key: string; name: string; plan: string }>("POST", "/admin/v1/keys", { name, ...fields });
      closeEditor(false);
      byId<HTMLInputElement>("new-key-name").value = "";
      page.showSecret(created, "Created key");
      await page.refresh();
      page.say(["Key ", named(created.name), ` created on plan ${created.plan}; copy its secret below now.`], false, `key:${created.id}`);
      page.focusSecret();
    }
  } catch (error) {
    if ((error as { problem?: { status: number } }).problem?.status === 401) return;
    // The refusal is said in the editor; a message beside the key's row from an earlier
    // save would say the opposite of it.
    if (editing) page.unsay(`key:${editing.id}`);
    showError(describeError(error));
  }
}

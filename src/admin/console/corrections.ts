/**
 * The console's local corrections (CONTRACT §15): the list, a form that sets a block's
 * correction, and Remove and Edit buttons per block, over /admin/v1/corrections. Its
 * markup is the page's #corrections-section; console.ts hands it the page's API call and
 * message helpers and loads it with the rest.
 *
 * Setting a block replaces its correction whole (PUT, as the admin API and `iplookup
 * corrections set` do): the form names the fields it corrects, and an empty field is not
 * corrected. So changing one field of a correction starts from Edit, which fills the form
 * with every field the correction names, and a block typed in again that would drop
 * fields of its correction asks first.
 */
import type { CorrectionJson } from "../../corrections/correction-json.ts";
// The admin API's own reading of a block (it imports nothing of Bun or node, so it runs in the browser).
import { parseCorrectionBlock } from "../../corrections/correction-rules.ts";
import { byId as element, isolate, labelCells, make, named, type Message } from "./dom.ts";
import { correctionAsn } from "./rules.ts";

export interface CorrectionsDeps {
  api<T>(method: string, path: string, body?: unknown): Promise<T>;
  /** Runs an action, showing a refusal's detail beside `place` instead of throwing. */
  attempt(action: () => Promise<void>, place: string): Promise<void>;
  say(text: Message, isError: boolean, place: string): void;
  /** Reads the audit log again: a change made here is listed there at once, as a key's or a plan's is. */
  loadAudit(): Promise<void>;
}

/** Where the section's messages are shown: under its form, above the list (data-place of #correction-form). */
const PLACE = "correction-form";

const SIGNALS = ["hosting", "tor", "vpn", "relay", "proxy"] as const;

/** A block in an admin API path: `/` as `_` (the API reads either `_` or `%2F`). */
function pathOf(cidr: string): string {
  return `/admin/v1/corrections/${encodeURIComponent(cidr.trim().replace("/", "_"))}`;
}

/**
 * A block as the admin API keys its correction (`2001:0DB8::/32` is `2001:db8::/32`, a
 * bare address its /32 or /128, `::ffff:192.0.2.0/120` is `192.0.2.0/24`); null for
 * text that is no block, which the API refuses.
 */
function blockOf(cidr: string): string | null {
  try {
    return parseCorrectionBlock(cidr).cidr;
  } catch {
    return null;
  }
}

/**
 * `country_code DE · asn 64500 · privacy.hosting true`: what a correction names, each
 * text the operator typed (an AS name, a city, a service) given to `typed`: `named` for
 * the page, `isolate` for a dialog. Isolated, a right-to-left override in one (U+202E
 * with no closing character) stays inside it instead of turning around the fields after
 * it and the sentence the list is said in.
 */
function fieldParts<T>(correction: CorrectionJson, typed: (text: string) => T): (string | T)[] {
  const parts: (string | T)[][] = [];
  const value = (given: unknown) => (given === null ? "null" : typeof given === "string" ? typed(given) : String(given));
  for (const field of ["country_code", "asn", "as_name", "city"] as const) {
    if (correction[field] !== undefined) parts.push([`${field} `, value(correction[field])]);
  }
  for (const [member, given] of Object.entries(correction.privacy ?? {})) parts.push([`privacy.${member} `, value(given)]);
  return parts.flatMap((part, at) => (at === 0 ? part : [" · ", ...part]));
}

/** The fields of fieldParts as plain text, for a dialog (see isolate). */
function fieldsText(correction: CorrectionJson): string {
  return fieldParts(correction, isolate).join("");
}

/** Sets the section up (the signal choices, the form); resolves nothing until load(). */
export function correctionsSection(deps: CorrectionsDeps): { load(): Promise<void>; forget(): void } {
  const signals = element("correction-signals");
  signals.replaceChildren(
    ...SIGNALS.map((signal) => {
      const select = make("select", undefined, { id: `correction-${signal}`, "aria-label": signal });
      select.append(make("option", `${signal}: as the data`, { value: "" }), make("option", `${signal}: yes`, { value: "true" }), make("option", `${signal}: no`, { value: "false" }));
      return select;
    }),
  );
  const form = element<HTMLFormElement>("correction-form");
  const submit = form.querySelector<HTMLButtonElement>("button[type=submit]")!;
  const cancel = make("button", "Cancel", { type: "button", class: "quiet", id: "correction-cancel", hidden: "" });
  submit.after(cancel);
  const editingLine = element("correction-editing");
  /** The corrections as last listed. */
  let listed: CorrectionJson[] = [];
  /** The correction the form was filled from (Edit), and its fields' text as filled. */
  let editing: CorrectionJson | null = null;
  let filled = new Map<string, string>();

  const input = (id: string) => element<HTMLInputElement | HTMLSelectElement>(id);
  const text = (id: string) => input(id).value.trim();
  /** Each field of the form: its input, and the value of a correction it shows. */
  const fields: readonly { id: string; of(correction: CorrectionJson): unknown }[] = [
    { id: "correction-country", of: (c) => c.country_code },
    { id: "correction-asn", of: (c) => c.asn },
    { id: "correction-as-name", of: (c) => c.as_name },
    { id: "correction-city", of: (c) => c.city },
    ...SIGNALS.map((signal) => ({ id: `correction-${signal}`, of: (c: CorrectionJson) => c.privacy?.[signal] })),
    { id: "correction-service", of: (c) => c.privacy?.service },
    { id: "correction-note", of: (c) => c.note },
  ];

  /** The boxes' placeholders, which a field named as null changes while it is edited. */
  const placeholders = new Map(fields.map((field) => [field.id, input(field.id) instanceof HTMLInputElement ? (input(field.id) as HTMLInputElement).placeholder : ""]));

  /** Back to setting a new block: the form emptied. */
  const stopEditing = () => {
    editing = null;
    filled = new Map();
    form.reset();
    for (const [id, placeholder] of placeholders) if (input(id) instanceof HTMLInputElement) (input(id) as HTMLInputElement).placeholder = placeholder;
    element<HTMLInputElement>("correction-cidr").readOnly = false;
    submit.textContent = "Set correction";
    cancel.hidden = true;
    editingLine.hidden = true;
    editingLine.textContent = "";
  };

  /** Fills the form with every field the correction names, to be changed and saved whole. */
  const edit = (correction: CorrectionJson) => {
    stopEditing();
    editing = correction;
    input("correction-cidr").value = correction.cidr;
    element<HTMLInputElement>("correction-cidr").readOnly = true;
    for (const field of fields) {
      const value = field.of(correction);
      const box = input(field.id);
      box.value = value === undefined || value === null ? "" : String(value);
      // Named as null: the box is empty, and says that the answer says null there until it is changed.
      if (value === null && box instanceof HTMLInputElement) box.placeholder = `${placeholders.get(field.id) ?? ""}: null`;
      filled.set(field.id, box.value);
    }
    submit.textContent = "Save correction";
    cancel.hidden = false;
    editingLine.textContent = `Editing the correction of ${correction.cidr}: the form holds every field it names. Saving sets them all; a field you empty is no longer corrected.`;
    editingLine.hidden = false;
    form.scrollIntoView({ block: "nearest" });
    input("correction-country").focus();
  };
  cancel.addEventListener("click", () => {
    const was = editing;
    stopEditing();
    if (was) document.querySelector<HTMLElement>(`#corrections tr[data-cidr="${CSS.escape(was.cidr)}"] button[data-edit]`)?.focus();
  });

  const load = async () => {
    const { corrections } = await deps.api<{ corrections: CorrectionJson[] }>("GET", "/admin/v1/corrections");
    listed = corrections;
    const rows = corrections.map((correction, index) => {
      const place = `correction:${correction.cidr}`;
      const row = make("tr", undefined, { "data-cidr": correction.cidr, "data-place": place });
      const remove = make("button", "Remove", { type: "button", class: "danger write" });
      remove.addEventListener("click", () =>
        deps.attempt(async () => {
          if (!confirm(`Remove the correction of ${correction.cidr}? Lookups answer what the data says there again.`)) return;
          await deps.api("DELETE", pathOf(correction.cidr));
          if (editing?.cidr === correction.cidr) stopEditing();
          await Promise.all([load(), deps.loadAudit()]);
          // Said where its row was: under the row before it, or above the list when it was the first.
          const before = corrections[index - 1];
          deps.say(`The correction of ${correction.cidr} is removed; every server answers the data there within a second.`, false, before ? `correction:${before.cidr}` : PLACE);
        }, place),
      );
      const editButton = make("button", "Edit", { type: "button", class: "quiet write", "data-edit": correction.cidr });
      editButton.addEventListener("click", () => edit(correction));
      const actions = make("td", undefined, { class: "actions" });
      actions.append(remove, editButton);
      const fieldsCell = make("td");
      fieldsCell.append(...fieldParts(correction, named));
      row.append(make("td", correction.cidr, { class: "mono" }), fieldsCell, make("td", correction.note ?? ""), make("td", correction.updated_at.slice(0, 10)), actions);
      return row;
    });
    if (rows.length === 0) {
      const empty = make("tr");
      empty.append(make("td", "No corrections: lookups answer what the data says.", { colspan: "5", class: "muted" }));
      rows.push(empty);
    }
    element("corrections").querySelector("tbody")!.replaceChildren(...rows);
    labelCells();
  };

  /**
   * The form as the admin API's body: the fields it names. An empty field is not named
   * (the data's value is answered), except a field Edit filled from a correction that
   * names it as null and the operator left alone: it stays named as null.
   */
  const body = (): Record<string, unknown> => {
    const value = (id: string): string | null | undefined => {
      if (editing && input(id).value === filled.get(id)) {
        const field = fields.find((candidate) => candidate.id === id)!;
        if (field.of(editing) === null) return null;
      }
      return text(id) === "" ? undefined : text(id);
    };
    const named: Record<string, unknown> = {};
    const country = value("correction-country");
    if (country !== undefined) named.country_code = country === null ? null : country.toUpperCase();
    const asn = value("correction-asn");
    if (asn !== undefined) named.asn = asn === null ? null : correctionAsn(asn);
    const asName = value("correction-as-name");
    if (asName !== undefined) named.as_name = asName;
    const city = value("correction-city");
    if (city !== undefined) named.city = city;
    const privacy: Record<string, unknown> = {};
    for (const signal of SIGNALS) {
      const chosen = input(`correction-${signal}`).value;
      if (chosen !== "") privacy[signal] = chosen === "true";
    }
    const service = value("correction-service");
    if (service !== undefined) privacy.service = service;
    if (Object.keys(privacy).length > 0) named.privacy = privacy;
    const note = text("correction-note");
    if (note !== "") named.note = note;
    return named;
  };

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    void deps.attempt(async () => {
      const cidr = text("correction-cidr");
      const sent = body();
      // A block typed in again, not through Edit: the PUT would replace its correction whole.
      const block = editing ? null : blockOf(cidr);
      const existing = block === null ? undefined : listed.find((correction) => blockOf(correction.cidr) === block);
      if (existing) {
        const names = Object.keys(sent).filter((name) => name !== "note");
        if (names.length === 0) {
          throw new Error(`${existing.cidr} is corrected already and the form names no field: to change its note or one of its fields, press Edit on its row, which fills the form with the fields it names; nothing was saved`);
        }
        const dropped = droppedFields(existing, sent);
        if (dropped.length > 0 && !confirm(`${existing.cidr} is corrected already (${fieldsText(existing)}). Setting it again replaces that correction whole: ${dropped.join(", ")} would no longer be corrected.\n\nTo keep them, cancel and press Edit on its row. Replace it?`)) return;
      }
      const saved = await deps.api<CorrectionJson>("PUT", pathOf(cidr), sent);
      stopEditing();
      await Promise.all([load(), deps.loadAudit()]);
      deps.say([`${saved.cidr} is corrected (`, ...fieldParts(saved, named), "); every server answers it within a second."], false, PLACE);
    }, PLACE);
  });

  /** Forgets the session's part of the section (a sign-out): the form emptied, a correction being edited closed, the list taken away. */
  const forget = () => {
    stopEditing();
    listed = [];
  };

  return { load, forget };
}

/** The fields (and privacy members) a correction names that a new body for its block would not. */
function droppedFields(correction: CorrectionJson, sent: Record<string, unknown>): string[] {
  const dropped: string[] = [];
  for (const field of ["country_code", "asn", "as_name", "city"] as const) if (correction[field] !== undefined && !(field in sent)) dropped.push(field);
  const privacy = (sent.privacy ?? {}) as Record<string, unknown>;
  for (const member of Object.keys(correction.privacy ?? {})) if (!(member in privacy)) dropped.push(`privacy.${member}`);
  if (correction.note !== null && sent.note === undefined) dropped.push("its note");
  return dropped;
}

/**
 * The console's local corrections (CONTRACT §15): the list, a form that sets a block's
 * correction, and a Remove button per block, over /admin/v1/corrections. Its markup is
 * the page's #corrections-section; console.ts hands it the page's API call and message
 * helpers and loads it with the rest.
 */
import type { CorrectionJson } from "../../corrections/correction-json.ts";
import { byId as element, labelCells, make } from "./dom.ts";

export interface CorrectionsDeps {
  api<T>(method: string, path: string, body?: unknown): Promise<T>;
  /** Runs an action, showing a refusal's detail beside `place` instead of throwing. */
  attempt(action: () => Promise<void>, place: string): Promise<void>;
  say(text: string, isError: boolean, place: string): void;
}

/** Where the section's messages are shown: under its form, above the list (data-place of #correction-form). */
const PLACE = "correction-form";

const SIGNALS = ["hosting", "tor", "vpn", "relay", "proxy"] as const;

/** A block in an admin API path: `/` as `_` (the API reads either `_` or `%2F`). */
function pathOf(cidr: string): string {
  return `/admin/v1/corrections/${encodeURIComponent(cidr.trim().replace("/", "_"))}`;
}

/** `country_code DE · asn 64500 · privacy.hosting true`: what a correction names. */
function fieldsText(correction: CorrectionJson): string {
  const parts: string[] = [];
  for (const field of ["country_code", "asn", "as_name", "city"] as const) {
    if (correction[field] !== undefined) parts.push(`${field} ${correction[field] === null ? "null" : String(correction[field])}`);
  }
  for (const [member, value] of Object.entries(correction.privacy ?? {})) parts.push(`privacy.${member} ${value === null ? "null" : String(value)}`);
  return parts.join(" · ");
}

/** Sets the section up (the signal choices, the form); resolves nothing until load(). */
export function correctionsSection(deps: CorrectionsDeps): { load(): Promise<void> } {
  const signals = element("correction-signals");
  signals.replaceChildren(
    ...SIGNALS.map((signal) => {
      const select = make("select", undefined, { id: `correction-${signal}`, "aria-label": signal });
      select.append(make("option", `${signal}: as the data`, { value: "" }), make("option", `${signal}: yes`, { value: "true" }), make("option", `${signal}: no`, { value: "false" }));
      return select;
    }),
  );

  const load = async () => {
    const { corrections } = await deps.api<{ corrections: CorrectionJson[] }>("GET", "/admin/v1/corrections");
    const rows = corrections.map((correction) => {
      const row = make("tr", undefined, { "data-cidr": correction.cidr });
      const remove = make("button", "Remove", { type: "button", class: "danger write" });
      remove.addEventListener("click", () =>
        deps.attempt(async () => {
          if (!confirm(`Remove the correction of ${correction.cidr}? Lookups answer what the data says there again.`)) return;
          await deps.api("DELETE", pathOf(correction.cidr));
          await load();
          deps.say(`The correction of ${correction.cidr} is removed; every server answers the data there within a second.`, false, PLACE);
        }, PLACE),
      );
      const actions = make("td", undefined, { class: "actions" });
      actions.append(remove);
      row.append(make("td", correction.cidr, { class: "mono" }), make("td", fieldsText(correction)), make("td", correction.note ?? ""), make("td", correction.updated_at.slice(0, 10)), actions);
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

  element("correction-form").addEventListener("submit", (event) => {
    event.preventDefault();
    void deps.attempt(async () => {
      const text = (id: string) => element<HTMLInputElement>(id).value.trim();
      const cidr = text("correction-cidr");
      // An empty field is left as the data says it; the API refuses a body naming nothing.
      const body: Record<string, unknown> = {};
      if (text("correction-country") !== "") body.country_code = text("correction-country").toUpperCase();
      if (text("correction-asn") !== "") body.asn = /^\d+$/.test(text("correction-asn")) ? Number(text("correction-asn")) : text("correction-asn");
      if (text("correction-as-name") !== "") body.as_name = text("correction-as-name");
      if (text("correction-city") !== "") body.city = text("correction-city");
      const privacy: Record<string, unknown> = {};
      for (const signal of SIGNALS) {
        const value = element<HTMLSelectElement>(`correction-${signal}`).value;
        if (value !== "") privacy[signal] = value === "true";
      }
      if (text("correction-service") !== "") privacy.service = text("correction-service");
      if (Object.keys(privacy).length > 0) body.privacy = privacy;
      if (text("correction-note") !== "") body.note = text("correction-note");
      const saved = await deps.api<CorrectionJson>("PUT", pathOf(cidr), body);
      element<HTMLFormElement>("correction-form").reset();
      await load();
      deps.say(`${saved.cidr} is corrected (${fieldsText(saved)}); every server answers it within a second.`, false, PLACE);
    }, PLACE);
  });

  return { load };
}

/**
 * The console's lookup-by-AS box (CONTRACT §14): an AS number shows the AS as GET
 * /v1/asn/{asn} answers it (its name, country, addresses and prefixes); any other text
 * searches AS names and numbers, and a result row looks that AS up. It asks the admin
 * API (/admin/v1/asn), which answers the same JSON as the public API and costs no units.
 * Its markup is the page's #asn-lookup section; every text is set as text.
 */
import type { AsnResult, AsnSummary } from "../../asn/asn-json.ts";
import { byId, make, named } from "./dom.ts";

/** A search's answer: GET /v1/asn?q= and /admin/v1/asn?q=. */
interface AsnSearch {
  readonly results: readonly AsnSummary[];
}

/** What the box needs from the console: a GET of the admin API that throws an Error whose message is the refusal's detail. */
export interface AsnLookupDeps {
  get<T>(path: string): Promise<T>;
}

const numbers = new Intl.NumberFormat("en-US");
/** An AS number as the API accepts it: `13335` or `AS13335`. */
const AS_NUMBER = /^(?:as)?(0|[1-9][0-9]*)$/i;

/** Wires the box: call once the page is loaded. */
export function startAsnLookup(deps: AsnLookupDeps): void {
  const form = byId<HTMLFormElement>("asn-form");
  const input = byId<HTMLInputElement>("asn-input");
  const error = byId("asn-error");
  const out = byId("asn-result");

  const show = async (load: () => Promise<Node[]>) => {
    error.hidden = true;
    try {
      out.replaceChildren(...(await load()));
    } catch (failure) {
      out.replaceChildren();
      error.textContent = failure instanceof Error ? failure.message : String(failure);
      error.hidden = false;
    }
  };
  const lookUp = (asn: string) => show(async () => describe(await deps.get<AsnResult>(`/admin/v1/asn/${encodeURIComponent(asn)}`)));
  const search = (text: string) =>
    show(async () => {
      const answer = await deps.get<AsnSearch>(`/admin/v1/asn?q=${encodeURIComponent(text)}`);
      return listing(answer, (asn) => {
        input.value = `AS${asn}`;
        void lookUp(String(asn));
      });
    });

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = input.value.trim();
    if (text === "") return;
    void (AS_NUMBER.test(text) ? lookUp(text) : search(text));
  });
}

/** An AS: a heading, its facts, and its prefixes in two scrolling lists. */
function describe(result: AsnResult): Node[] {
  if (!result.found) return [make("p", `AS${result.asn} is not in the loaded data.`, { class: "muted", id: "asn-not-found" })];
  const heading = make("h3", `AS${result.asn} `, { id: "asn-heading" });
  // The name may be an operator's (a correction's as_name): isolated, as every such text beside others is.
  heading.append(result.name === null ? "(no name)" : named(result.name));
  const facts = make("p", "", { id: "asn-facts" });
  const country = result.country_code === null ? "no country" : `${result.country} (${result.country_code})`;
  const hosting = result.hosting === null ? "" : result.hosting ? " · hosting provider" : " · not a hosting provider";
  facts.textContent = `${country} · ${numbers.format(result.num_ips)} IPv4 addresses · ${numbers.format(result.prefixes.length)} IPv4 and ${numbers.format(result.prefixes6.length)} IPv6 prefixes${hosting}`;
  const lists = make("div", undefined, { class: "asn-prefixes" });
  for (const [title, prefixes, id] of [["IPv4", result.prefixes, "asn-prefixes4"], ["IPv6", result.prefixes6, "asn-prefixes6"]] as const) {
    const column = make("div");
    const list = make("ul", undefined, { id, class: "mono" });
    list.append(...prefixes.map((prefix) => make("li", prefix)));
    column.append(make("h3", `${title} (${numbers.format(prefixes.length)})`), list);
    lists.append(column);
  }
  return [heading, facts, lists];
}

/** Search results as a table; a row's button looks its AS up. */
function listing(answer: AsnSearch, open: (asn: number) => void): Node[] {
  if (answer.results.length === 0) return [make("p", "No AS has that in its name or number.", { class: "muted" })];
  const table = make("table", undefined, { class: "compact", id: "asn-results" });
  const head = make("thead");
  const headRow = make("tr");
  headRow.append(make("th", "AS"), make("th", "Name"), make("th", "Country"), make("th", "IPv4 addresses", { class: "num" }));
  head.append(headRow);
  const body = make("tbody");
  for (const entry of answer.results) {
    const row = make("tr");
    const cell = make("td");
    const button = make("button", `AS${entry.asn}`, { type: "button", class: "quiet" });
    button.addEventListener("click", () => open(entry.asn));
    cell.append(button);
    row.append(cell, make("td", entry.name ?? "—"), make("td", entry.country_code ?? "—"), make("td", numbers.format(entry.num_ips), { class: "num" }));
    body.append(row);
  }
  table.append(head, body);
  return [table];
}

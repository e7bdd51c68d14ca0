/** The console's two ways of reaching the page: every module of the console uses these. */

/** The page's element with this id; a missing one is a bug in the page. */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const found = document.getElementById(id);
  if (!found) throw new Error(`the page has no #${id}`);
  return found as T;
}

/** A new element with text content and attributes: nothing is parsed as HTML. */
export function make<K extends keyof HTMLElementTagNameMap>(tag: K, text?: string, attributes: Record<string, string> = {}): HTMLElementTagNameMap[K] {
  const created = document.createElement(tag);
  if (text !== undefined) created.textContent = text;
  for (const [name, value] of Object.entries(attributes)) created.setAttribute(name, value);
  return created;
}

/**
 * Text an operator chose (a key's name) in a sentence: isolated for the bidirectional
 * algorithm, so that right-to-left text or an override character in it cannot turn
 * around the sentence or the id it is set in. `isolate` for a plain string (a prompt,
 * an option; between U+2068 and U+2069), `named` for the page (a <bdi>, which leaves the
 * text as it is for whoever copies it).
 */
export function isolate(text: string): string {
  return `\u2068${text}\u2069`;
}

export function named(text: string): HTMLElement {
  return make("bdi", text);
}

/**
 * A JSON value written as JSON.stringify writes it, each string in it (a member's name, a
 * value) given to `typed` without its quotes: `named` for the page, `isolate` for a
 * tooltip. An override in a metadata value then stays inside that value instead of
 * turning around the rest of the object and of the line it is shown on.
 */
export function jsonParts<T>(value: unknown, typed: (text: string) => T): (string | T)[] {
  const quoted = (text: string): (string | T)[] => ['"', typed(JSON.stringify(text).slice(1, -1)), '"'];
  const each = <E>(items: readonly E[], part: (item: E) => (string | T)[]) => items.flatMap((item, at) => (at === 0 ? part(item) : [",", ...part(item)]));
  if (typeof value === "string") return quoted(value);
  if (Array.isArray(value)) return ["[", ...each(value, (item) => jsonParts(item, typed)), "]"];
  if (typeof value === "object" && value !== null) return ["{", ...each(Object.entries(value), ([name, member]) => [...quoted(name), ":", ...jsonParts(member, typed)]), "}"];
  return [JSON.stringify(value) ?? "null"];
}

/** A message: text, or text with parts such as `named` ones. */
export type Message = string | readonly (string | Node)[];

/**
 * Names each cell of the tables that stack on a phone (`table.stack`) by its column's
 * heading (data-label), which the narrow layout shows beside the value. Call it after a
 * table's rows are drawn.
 */
export function labelCells(): void {
  for (const table of document.querySelectorAll<HTMLTableElement>("table.stack")) {
    const headings = [...table.querySelectorAll("thead th")].map((heading) => heading.textContent ?? "");
    for (const row of table.querySelectorAll<HTMLTableRowElement>("tbody tr:not(.note-row)")) {
      [...row.cells].forEach((cell, index) => cell.setAttribute("data-label", cell.colSpan > 1 ? "" : (headings[index] ?? "")));
    }
  }
}

/**
 * Read-only admin tokens in the console (CONTRACT §16): once signed in, the page asks
 * GET /admin/v1/token what the token may do. A read-only token's page says so at the top,
 * hides the buttons that change something and disables every field that would, however
 * often the tables are drawn again; the server refuses such changes anyway (403
 * read_only_token), so this only spares the operator a refusal.
 */
import { byId, make, type ConsoleHooks } from "./console-hooks.ts";
import { named } from "./dom.ts";

/**
 * The parts of the page where something can be changed, and their controls that change
 * it: every control of an area, or only its buttons marked `write` where the area also
 * has buttons that only read (a webhook's Deliveries). A secret's panel is none of them:
 * its Copy and Done change nothing, and Done must always take the secret off the page.
 */
const WRITE_AREAS: readonly (readonly [id: string, controls: string])[] = [
  // The secret panel is drawn under a key's row (see placeSecret in console.ts).
  ["keys", ":is(input, select, button, textarea):not(#secret-panel *)"],
  ["plans", "input, select, button, textarea"],
  ["create-key-form", "input, select, button, textarea"],
  ["key-editor", "input, select, button, textarea"],
  ["correction-form", "input, select, button, textarea"],
  ["corrections", "button"],
  ["add-webhook-form", "input, select, button, textarea"],
  ["webhooks", "button.write"],
];

let observer: MutationObserver | null = null;
/** The controls this module disabled, enabled again when a token that may write signs in. */
const disabled = new Set<HTMLInputElement | HTMLSelectElement | HTMLButtonElement | HTMLTextAreaElement>();

/** Asks what the token may do and sets the page up for it. */
export async function applyTokenAccess(hooks: Pick<ConsoleHooks, "api">): Promise<void> {
  const token = await hooks.api<{ id: string; name: string; read_only: boolean }>("GET", "/admin/v1/token");
  setReadOnly(token.read_only, token.name);
}

function setReadOnly(readOnly: boolean, name: string): void {
  document.body.classList.toggle("read-only", readOnly);
  document.getElementById("read-only-note")?.remove();
  observer?.disconnect();
  observer = null;
  if (!readOnly) {
    for (const control of disabled) control.disabled = false;
    disabled.clear();
    return;
  }
  const note = make("p", undefined, { id: "read-only-note", class: "message read-only-note", role: "status" });
  // The token's name is the operator's text: isolated, an override in it stays inside it.
  note.append("Signed in with a read-only token (", named(name), "): you can look, not change. Changes need a token made without --read-only.");
  byId("signed-in").prepend(note);
  disableWrites();
  // The tables are drawn again after every load: disable what they draw, too.
  observer = new MutationObserver(disableWrites);
  for (const [id] of WRITE_AREAS) {
    const area = document.getElementById(id);
    if (area) observer.observe(area, { childList: true, subtree: true });
  }
}

function disableWrites(): void {
  for (const [id, controls] of WRITE_AREAS) {
    for (const control of document.getElementById(id)?.querySelectorAll<HTMLInputElement | HTMLSelectElement | HTMLButtonElement | HTMLTextAreaElement>(controls) ?? []) {
      if (!control.disabled) {
        control.disabled = true;
        disabled.add(control);
      }
    }
  }
}

/**
 * The console's Webhooks page (CONTRACT §16): list, add (the signing secret shown once),
 * send a test event, remove, and each webhook's recent deliveries. Its markup is the
 * `#webhooks-card` section of index.html; console.ts hands it what it needs (ConsoleKit)
 * and calls refresh() with the rest of the page.
 */
import { EVENT_SUMMARIES, EVENT_TYPES } from "../../events/event-names.ts";
import type { Delivery, IssuedWebhook, Webhook, WebhookTestResult } from "./api-types.ts";
import { isolate, named } from "./dom.ts";

/** What the page uses of console.ts. */
export interface ConsoleKit {
  api<T>(method: string, path: string, body?: unknown): Promise<T>;
  make<K extends keyof HTMLElementTagNameMap>(tag: K, text?: string, attributes?: Record<string, string>): HTMLElementTagNameMap[K];
  /** A message beside the element whose data-place is `place`. */
  say(text: string, isError: boolean, place: string): void;
  attempt(action: () => Promise<void>, place: string): Promise<void>;
  placeNote(): void;
  /** Reads the audit log again: a change made here is listed there at once, as a key's or a plan's is. */
  loadAudit(): Promise<void>;
  formatTime(iso: string | null): string;
  ago(iso: string): string;
}

export function startWebhooks(kit: ConsoleKit): { refresh(): Promise<void>; forget(): void } {
  const { make } = kit;
  const byId = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;
  let webhooks: Webhook[] = [];
  /** The webhook whose deliveries are shown. */
  let selected: string | null = null;
  /** The webhook whose signing secret is shown, or null. */
  let secretOf: string | null = null;

  const choices = byId("webhook-events");
  for (const name of EVENT_TYPES) {
    const meaning = EVENT_SUMMARIES[name];
    const label = make("label", undefined, { class: "event-choice", title: meaning });
    label.append(make("input", undefined, { type: "checkbox", name: "event", value: name }), ` ${name}`);
    choices.append(label);
  }

  byId("add-webhook-form").addEventListener("submit", (event) => {
    event.preventDefault();
    void kit.attempt(async () => {
      const url = byId<HTMLInputElement>("webhook-url");
      const events = [...choices.querySelectorAll<HTMLInputElement>("input[name=event]:checked")].map((box) => box.value);
      if (events.length === 0) throw new Error("Tick at least one event; nothing was added");
      const issued = await kit.api<IssuedWebhook>("POST", "/admin/v1/webhooks", { url: url.value.trim(), events });
      url.value = "";
      for (const box of choices.querySelectorAll<HTMLInputElement>("input[name=event]")) box.checked = false;
      // The URL is the operator's text (it may hold a bidirectional override): isolated, it cannot turn the title around.
      byId("webhook-secret-title").replaceChildren(`Webhook ${issued.id} (`, named(issued.url), ")");
      byId("webhook-secret-value").textContent = issued.secret;
      byId("webhook-copy-secret").textContent = "Copy";
      byId("webhook-secret-panel").hidden = false;
      secretOf = issued.id;
      selected = issued.id;
      await Promise.all([refresh(), kit.loadAudit()]);
      kit.say(`Webhook added for ${issued.events.join(", ")}; copy its signing secret above now, then send a test event.`, false, `webhook:${issued.id}`);
    }, "webhook-add");
  });
  byId("webhook-copy-secret").addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(byId("webhook-secret-value").textContent ?? "");
      byId("webhook-copy-secret").textContent = "Copied";
    } catch {
      const range = document.createRange();
      range.selectNodeContents(byId("webhook-secret-value"));
      getSelection()?.removeAllRanges();
      getSelection()?.addRange(range);
      byId("webhook-copy-secret").textContent = "Press Ctrl+C";
    }
  });
  /** Forgets the signing secret shown (Done, or a sign-out). */
  function forget(): void {
    secretOf = null;
    byId("webhook-secret-value").textContent = "";
    byId("webhook-secret-title").textContent = "";
    byId("webhook-secret-panel").hidden = true;
  }
  byId("webhook-dismiss-secret").addEventListener("click", forget);

  function row(webhook: Webhook): HTMLTableRowElement {
    const place = `webhook:${webhook.id}`;
    const tr = make("tr", undefined, { "data-webhook-id": webhook.id, "data-place": place });
    if (webhook.id === selected) tr.classList.add("selected");
    const url = make("td", undefined, { class: "url" });
    url.append(make("span", webhook.url, { class: "mono" }), make("br"), make("span", webhook.id, { class: "muted mono" }));
    const test = make("button", "Send test", { type: "button", class: "quiet write" });
    test.addEventListener("click", () =>
      kit.attempt(async () => {
        test.disabled = true;
        // A slow receiver holds the answer up to the delivery's timeout: say it is under way.
        test.textContent = "Sending…";
        try {
          const result = await kit.api<WebhookTestResult>("POST", `/admin/v1/webhooks/${encodeURIComponent(webhook.id)}/test`);
          const attempt = result.attempt;
          selected = webhook.id;
          // Drawn first, so that the message lands on the new rows and is scrolled into view.
          await refresh();
          if (!attempt) kit.say(`Test event ${result.event_id} queued; a server is sending it.`, false, place);
          else if (attempt.state === "delivered") kit.say(`Test event delivered: HTTP ${attempt.status} in ${attempt.duration_ms} ms.`, false, place);
          else kit.say(`Test event not delivered: ${attempt.status === null ? attempt.error : `HTTP ${attempt.status}`}. It will be retried with backoff.`, true, place);
        } finally {
          test.disabled = false;
          test.textContent = "Send test";
        }
      }, place),
    );
    const show = make("button", "Deliveries", { type: "button", class: "quiet" });
    show.addEventListener("click", () =>
      kit.attempt(async () => {
        selected = webhook.id;
        await refresh();
        byId("deliveries").scrollIntoView({ block: "nearest" });
      }, place),
    );
    const remove = make("button", "Remove", { type: "button", class: "danger write" });
    remove.addEventListener("click", () =>
      kit.attempt(async () => {
        if (!confirm(`Remove the webhook to ${isolate(webhook.url)}? Nothing more is sent to it, pending deliveries included.`)) return;
        await kit.api("DELETE", `/admin/v1/webhooks/${encodeURIComponent(webhook.id)}`);
        // Its signing secret, if still shown, signs nothing any more.
        if (secretOf === webhook.id) forget();
        if (selected === webhook.id) selected = null;
        await Promise.all([refresh(), kit.loadAudit()]);
        kit.say(`Webhook ${webhook.id} removed.`, false, "webhook-list");
      }, place),
    );
    const actions = make("td", undefined, { class: "actions" });
    actions.append(test, show, remove);
    tr.append(url, make("td", webhook.events.join(", ")), make("td", webhook.created_at.slice(0, 10)), actions);
    return tr;
  }

  function deliveryRow(delivery: Delivery): HTMLTableRowElement {
    const last = delivery.attempts[delivery.attempts.length - 1];
    const tr = make("tr", undefined, { "data-event-id": delivery.event_id, class: `delivery-${delivery.state}` });
    const event = make("td");
    event.append(make("span", delivery.event_type), make("br"), make("span", delivery.event_id, { class: "muted mono" }));
    const state = make("td", delivery.state, { class: `state-${delivery.state}` });
    if (delivery.state === "pending" && delivery.next_attempt_at) state.append(make("br"), make("span", `next ${kit.ago(delivery.next_attempt_at)}`, { class: "muted" }));
    const outcome = last ? (last.status === null ? (last.error ?? "no answer") : `HTTP ${last.status}`) : "not tried yet";
    const answer = make("td", last?.response ?? "", { class: "mono answer", title: "The first 256 bytes of the answer" });
    tr.append(
      event,
      state,
      make("td", String(delivery.attempts.length), { class: "num" }),
      make("td", last?.at ? `${kit.formatTime(last.at)}: ${outcome}, ${last.duration_ms} ms` : outcome),
      answer,
    );
    return tr;
  }

  async function refresh(): Promise<void> {
    webhooks = (await kit.api<{ webhooks: Webhook[] }>("GET", "/admin/v1/webhooks")).webhooks;
    if (!webhooks.some((webhook) => webhook.id === selected)) selected = webhooks[0]?.id ?? null;
    const rows = webhooks.map(row);
    if (rows.length === 0) {
      const empty = make("tr");
      empty.append(make("td", "No webhooks yet: add one above.", { colspan: "4", class: "muted" }));
      rows.push(empty);
    }
    byId("webhooks").querySelector("tbody")!.replaceChildren(...rows);
    const title = byId("deliveries-title");
    const body = byId("deliveries").querySelector("tbody")!;
    if (selected === null) {
      title.textContent = "Recent deliveries";
      body.replaceChildren();
    } else {
      const deliveries = (await kit.api<{ deliveries: Delivery[] }>("GET", `/admin/v1/webhooks/${encodeURIComponent(selected)}/deliveries`)).deliveries;
      title.replaceChildren("Recent deliveries to ", named(webhooks.find((webhook) => webhook.id === selected)?.url ?? selected));
      const rows = deliveries.map(deliveryRow);
      if (rows.length === 0) {
        const empty = make("tr");
        empty.append(make("td", "Nothing sent yet: send a test event.", { colspan: "5", class: "muted" }));
        rows.push(empty);
      }
      body.replaceChildren(...rows);
    }
    kit.placeNote();
  }

  return { refresh, forget };
}

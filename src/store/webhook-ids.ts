/** A new webhook id, `wh_` and 16 random base32 characters (80 bits), as key ids are made. */
const ID_ALPHABET = "abcdefghijklmnopqrstuvwxyz234567";

export function newWebhookId(): string {
  let id = "wh_";
  for (const byte of crypto.getRandomValues(new Uint8Array(16))) id += ID_ALPHABET[byte & 31];
  return id;
}

/** The event types of a webhook as one column: `a,b`, matched as `,a,b,` contains `,type,`. */
export function eventsColumn(events: readonly string[]): string {
  return events.join(",");
}

export function eventsOf(column: string): string[] {
  return column === "" ? [] : column.split(",");
}

/**
 * A webhook's URL as one receiver, so that two spellings of one receiver are one webhook:
 * the URL as URL() reads it (`HTTP://Host:80/x` is `http://host/x`), without a fragment
 * or an empty query (`…/x?#` is `…/x`, as a state may hold from before webhookUrlError
 * refused them), with the percent-encodings of its path and query normalised as RFC 3986
 * §6.2.2 does: an unreserved character's is decoded (`/%78` is `/x`, `%7e` is `~`), any
 * other's hex is in capitals (`%2f` is `%2F`). A stored URL URL() cannot read (none can
 * be registered) stands for itself.
 */
export function receiverOf(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  parsed.hash = "";
  // "" when the query is empty or absent: setting it so drops a `?` with nothing after it.
  if (parsed.search === "") parsed.search = "";
  const tail = parsed.pathname + parsed.search;
  return parsed.href.slice(0, parsed.href.length - tail.length) + tail.replace(/%([0-9A-Fa-f]{2})/g, normalisedEncoding);
}

/** RFC 3986 §2.3: the characters whose percent-encoding means the character itself. */
const UNRESERVED = /^[A-Za-z0-9._~-]$/;

function normalisedEncoding(_: string, hex: string): string {
  const character = String.fromCharCode(Number.parseInt(hex, 16));
  return UNRESERVED.test(character) ? character : `%${hex.toUpperCase()}`;
}

/** The webhook of `url` among `held` (id and URL), or undefined: one receiver, one webhook. */
export function webhookOfReceiver(held: readonly { id: string; url: string }[], url: string): string | undefined {
  const receiver = receiverOf(url);
  return held.find((webhook) => receiverOf(webhook.url) === receiver)?.id;
}

/**
 * createWebhook's refusal of a URL another webhook has already: each event would reach
 * the receiver twice, with one webhook-id and two signatures, and the URL would no longer
 * name one webhook (`webhooks list --json | jq 'select(.url == …)'`).
 */
export class DuplicateWebhookError extends Error {
  override readonly name = "DuplicateWebhookError";
  constructor(readonly existingId: string) {
    super(`the webhook ${existingId} has this URL already; remove it first to register the URL again (with other events or a new secret)`);
  }
}

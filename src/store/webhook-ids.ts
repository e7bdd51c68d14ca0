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

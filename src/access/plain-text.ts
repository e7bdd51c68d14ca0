/**
 * Text an operator gives iplookup (key names, metadata, notes, URLs, any admin input)
 * holds no control character, C0, DEL or C1 (U+0080–U+009F, among them CSI, which a
 * terminal acts on), and no lone surrogate, which no store keeps as it came (SQLite and
 * PostgreSQL store U+FFFD in its place, so an answer and the stored value would differ).
 */
const UNSAFE = /[\p{Cc}\p{Cs}]/u;
const EVERY_UNSAFE = new RegExp(UNSAFE.source, "gu");

/** Whether `text` holds a control character or a lone surrogate. */
export function hasUnsafeCharacter(text: string): boolean {
  return UNSAFE.test(text);
}

/**
 * How many characters (Unicode code points) `text` holds, the unit every text limit
 * iplookup states is counted in: an emoji is one, where `length` counts its two UTF-16
 * code units.
 */
export function characterCount(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

/** `text` with each control character and lone surrogate shown as `?`, for a message that quotes it. */
export function printable(text: string): string {
  return text.replace(EVERY_UNSAFE, "?");
}

/**
 * The control characters, lone surrogates, and the bidirectional controls: embeddings and
 * overrides (U+202A–U+202E), isolates (U+2066–U+2069) and the marks (U+200E, U+200F,
 * U+061C). Those are not control characters, and a name may hold them (a right-to-left
 * name may need one); but a terminal cannot isolate text, so one would reorder the rest
 * of the line it is printed on (the id beside a key's name, other columns).
 */
const TERMINAL_UNSAFE = /[\p{Cc}\p{Cs}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu;

/**
 * `text` with each control character (C0, DEL, C1), lone surrogate and bidirectional
 * control written out (`\u001b`, `\u202e`), for a line a terminal shows: text from a
 * download (an MMDB's metadata, an archive's file names, an AS name) or an operator's
 * (a key's name) cannot clear the screen, set the title or reorder the line. Printable
 * text is kept as it is, so writing out text already written out changes nothing.
 */
export function showingControls(text: string): string {
  return text.replace(TERMINAL_UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

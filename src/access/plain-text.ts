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

/** `text` with each control character and lone surrogate shown as `?`, for a message that quotes it. */
export function printable(text: string): string {
  return text.replace(EVERY_UNSAFE, "?");
}

import { ApiError } from "../errors/api-error.ts";

/**
 * What no admin input may hold, whatever the field: C0 control characters (NUL
 * included, which PostgreSQL cannot store in text and SQLite stores silently) and DEL.
 * Names, ids, notes and URLs never need them, and a line with one can forge a log.
 */
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * Refuses an admin request-target whose path or query does not decode to text without
 * control characters: bad percent-encoding (`%zz`, `%`, a cut UTF-8 sequence like
 * `%E2%82`), which the router would hand a handler as a null parameter, and encoded
 * control characters (`%00`). Answers 400 `invalid_request`, before anything is read.
 */
export function checkAdminTarget(url: string, path: string): void {
  for (const segment of path.split("/")) {
    if (!segment.includes("%") && !CONTROL.test(segment)) continue;
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      throw new ApiError("invalid_request", `the path segment "${segment}" is not valid percent-encoding (UTF-8)`);
    }
    if (CONTROL.test(decoded)) throw new ApiError("invalid_request", `the path segment "${segment}" holds a control character`);
  }
  const query = url.indexOf("?");
  if (query < 0) return;
  for (const [name, value] of new URLSearchParams(url.slice(query + 1))) {
    if (CONTROL.test(name) || CONTROL.test(value)) throw new ApiError("invalid_request", `the query parameter "${printable(name)}" holds a control character`);
  }
  for (const part of url.slice(query + 1).split("&")) {
    try {
      decodeURIComponent(part.replaceAll("+", " "));
    } catch {
      throw new ApiError("invalid_request", `the query "${printable(part)}" is not valid percent-encoding (UTF-8)`);
    }
  }
}

/**
 * Refuses a parsed admin body with a control character in any string, member names
 * included, naming the member (`/name`, `/metadata/team`). 400 `invalid_request`.
 */
export function checkAdminBody(value: unknown, where = ""): void {
  if (typeof value === "string") {
    if (CONTROL.test(value)) throw new ApiError("invalid_request", `${where || "the body"}: a control character is not allowed`);
  } else if (Array.isArray(value)) {
    value.forEach((item, index) => checkAdminBody(item, `${where}/${index}`));
  } else if (value !== null && typeof value === "object") {
    for (const [name, member] of Object.entries(value)) {
      if (CONTROL.test(name)) throw new ApiError("invalid_request", `${where || "the body"}: a member name holds a control character`);
      checkAdminBody(member, `${where}/${name}`);
    }
  }
}

function printable(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f]/g, "?");
}

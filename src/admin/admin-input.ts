import { hasUnsafeCharacter, printable } from "../access/plain-text.ts";
import { ApiError } from "../errors/api-error.ts";
import { badQueryEncoding, decodeQueryPart } from "../http/query-values.ts";

/*
 * What no admin input may hold, whatever the field (see plain-text.ts): control
 * characters (NUL included, which PostgreSQL cannot store in text and SQLite stores
 * silently; C1, which a terminal acts on) and lone surrogates. Names, ids, notes and
 * URLs never need them, and a line with one can forge a log.
 */

/**
 * Refuses an admin request-target whose path or query does not decode to text without
 * control characters, or whose query names a parameter twice: bad percent-encoding
 * (`%zz`, `%`, a cut UTF-8 sequence like `%E2%82`), which the router would hand a
 * handler as a null parameter, encoded control characters (`%00`), and a repeated
 * parameter, of which the framework would keep one. Answers 400 `invalid_request`,
 * before anything is read.
 */
export function checkAdminTarget(url: string, path: string): void {
  for (const segment of path.split("/")) {
    if (!segment.includes("%") && !hasUnsafeCharacter(segment)) continue;
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      throw new ApiError("invalid_request", `the path segment "${segment}" is not valid percent-encoding (UTF-8)`);
    }
    if (hasUnsafeCharacter(decoded)) throw new ApiError("invalid_request", `the path segment "${segment}" holds a control character or a lone surrogate`);
  }
  const query = url.indexOf("?");
  if (query < 0) return;
  const seen = new Set<string>();
  for (const [name, value] of new URLSearchParams(url.slice(query + 1))) {
    if (hasUnsafeCharacter(name) || hasUnsafeCharacter(value)) throw new ApiError("invalid_request", `the query parameter "${printable(name)}" holds a control character or a lone surrogate`);
    if (seen.has(name)) throw new ApiError("invalid_request", `give the query parameter "${printable(name)}" once`);
    seen.add(name);
  }
  for (const part of url.slice(query + 1).split("&")) {
    if (decodeQueryPart(part) === null) throw badQueryEncoding(part);
  }
}

/**
 * Refuses a parsed admin body with a control character in any string, member names
 * included, naming the member (`/name`, `/metadata/team`). 400 `invalid_request`.
 */
export function checkAdminBody(value: unknown, where = ""): void {
  if (typeof value === "string") {
    if (hasUnsafeCharacter(value)) throw new ApiError("invalid_request", `${where || "the body"}: a control character or a lone surrogate is not allowed`);
  } else if (Array.isArray(value)) {
    value.forEach((item, index) => checkAdminBody(item, `${where}/${index}`));
  } else if (value !== null && typeof value === "object") {
    for (const [name, member] of Object.entries(value)) {
      if (hasUnsafeCharacter(name)) throw new ApiError("invalid_request", `${where || "the body"}: a member name holds a control character or a lone surrogate`);
      checkAdminBody(member, `${where}/${name}`);
    }
  }
}

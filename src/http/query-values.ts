import { printable } from "../access/plain-text.ts";
import { ApiError } from "../errors/api-error.ts";

/**
 * Every value of a query parameter in a request URL, in order: a repeated parameter has
 * them all, where the framework's parsed query keeps one. Parts are split as
 * URLSearchParams splits them (`&`, then the first `=`; `+` is a space). A value of the
 * parameter that is not valid percent-encoded UTF-8 (`%zz`, a lone `%`, a cut sequence
 * such as `%E2%82`, an encoded surrogate) is refused, 400 `invalid_request`, where
 * URLSearchParams would read it leniently (`%zz` as written, a cut sequence as U+FFFD)
 * and a search would answer, and charge for, a text nobody sent. An encoded control
 * character (`%00`) is valid encoding and is given as it decodes.
 */
export function queryValues(url: string, name: string): string[] {
  const at = url.indexOf("?");
  if (at < 0) return [];
  const values: string[] = [];
  for (const part of url.slice(at + 1).split("&")) {
    if (part === "") continue;
    const equals = part.indexOf("=");
    const rawName = equals < 0 ? part : part.slice(0, equals);
    // A name that does not decode is not `name` (the route's own checks refuse it).
    if (decodeQueryPart(rawName) !== name) continue;
    const value = decodeQueryPart(equals < 0 ? "" : part.slice(equals + 1));
    if (value === null) throw badQueryEncoding(part);
    values.push(value);
  }
  return values;
}

/** One name or value of a query, decoded (`+` is a space), or null when it is not valid percent-encoded UTF-8. */
export function decodeQueryPart(text: string): string | null {
  try {
    return decodeURIComponent(text.replaceAll("+", " "));
  } catch {
    return null;
  }
}

/** The refusal of a query part (`q=%zz`) that is not valid percent-encoded UTF-8, the same on the public and admin ports. */
export function badQueryEncoding(part: string): ApiError {
  const shown = part.length <= 80 ? part : `${part.slice(0, 77)}...`;
  return new ApiError("invalid_request", `the query "${printable(shown)}" is not valid percent-encoding (UTF-8)`);
}

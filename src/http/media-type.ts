import { printable } from "../access/plain-text.ts";
import { ApiError } from "../errors/api-error.ts";

/**
 * True for `application/json`, alone or with `charset=utf-8` (CONTRACT §3); any other
 * type or parameter is refused, so a client never has its body read in a charset it
 * did not mean.
 */
export function isJsonMediaType(contentType: string | null): boolean {
  if (contentType === null) return false;
  if (contentType === "application/json") return true;
  const [type, ...params] = contentType.split(";");
  if ((type as string).trim().toLowerCase() !== "application/json") return false;
  return params.every((param) => {
    const [name, value = ""] = param.split("=");
    return (
      (name as string).trim().toLowerCase() === "charset" &&
      value.trim().replace(/^"(.*)"$/, "$1").toLowerCase() === "utf-8"
    );
  });
}

/**
 * Refuses a request body sent with a content coding (RFC 9110 §8.4): iplookup decodes
 * none, so a `Content-Encoding` that names any coding but `identity` (gzip, deflate, br,
 * zstd, …) is 415 `unsupported_media_type`, with `Accept-Encoding: identity` (RFC 9110
 * §15.5.16), before the body is read or anything is charged. Read unrefused, a gzip body
 * was taken for JSON text that is not UTF-8, and a plain body labelled gzip was answered
 * and charged as if the label were not there. No header, an empty one, or identity
 * alone: the body is taken as it comes.
 */
export function checkContentEncoding(contentEncoding: string | null): void {
  if (contentEncoding === null) return;
  const codings = contentEncoding
    .split(",")
    .map((coding) => coding.trim())
    .filter((coding) => coding !== "" && coding.toLowerCase() !== "identity");
  if (codings.length === 0) return;
  const named = codings.join(", ");
  throw new ApiError(
    "unsupported_media_type",
    `Content-Encoding ${printable(named.length <= 40 ? named : `${named.slice(0, 37)}...`)} is not supported: request bodies are accepted unencoded only; send the body without a Content-Encoding`,
    {},
    { "accept-encoding": "identity" },
  );
}

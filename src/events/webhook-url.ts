import { hasUnsafeCharacter } from "../access/plain-text.ts";

/**
 * What a webhook's URL may be (CONTRACT §16): `http://` or `https://`, to any address the
 * operator registers (a receiver on the same machine, a private address: the operator
 * is trusted with the admin API). No credentials in it (they would be shown wherever
 * webhooks are listed), no fragment, at most 2,000 characters. Null when acceptable,
 * else the reason.
 *
 * `as`: "new" for a URL being registered; "stored" for one a state already holds (a
 * snapshot being copied), which may hold C1 control characters or lone surrogates,
 * taken before the rule of plain-text.ts reached URLs: a state that could be written
 * can always be copied.
 */
export const MAX_URL_LENGTH = 2000;

export function webhookUrlError(text: string, as: "new" | "stored" = "new"): string | null {
  if (text.length > MAX_URL_LENGTH) return `the URL is longer than ${MAX_URL_LENGTH} characters`;
  // Control characters and spaces: URL() would quietly drop or encode them.
  if (/[\u0000-\u0020\u007f]/.test(text) || (as === "new" && hasUnsafeCharacter(text))) return "the URL holds spaces or control characters";
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `"${text}" is not a URL`;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return `a webhook URL is http:// or https:// (got ${url.protocol}//)`;
  if (url.hostname === "") return "the URL names no host";
  if (url.username !== "" || url.password !== "") return "put no credentials in a webhook URL; deliveries are signed (verify the webhook-signature header)";
  if (url.hash !== "") return "a webhook URL has no #fragment";
  return null;
}
